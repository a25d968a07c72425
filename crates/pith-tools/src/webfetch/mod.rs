//! `webfetch`: reads a web page for the model (docs, changelogs, issues). Each hop (the URL,
//! then each redirect) is checked before it is connected to: its host and port against
//! `[permission.webfetch]` (a redirect elsewhere than the approved host and port is followed
//! only when the configured rules allow it; otherwise the model is told, and its own call is
//! asked about), and the addresses its name resolves to against the address guard (`guard`:
//! this machine and its networks are refused unless a rule names the host and port), the
//! client connecting only to those checked addresses. HTML is stripped of what is not content
//! and converted to Markdown off the async runtime, bounded in depth, size and time (`html`);
//! the text left is capped, then the usual truncation applies, which keeps the full text
//! recallable. No key, cookie or header of pith's is ever sent.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError, ToolMeta, ToolOutput, parse_input};
use crate::permission::Permissions;
use pith_config::WebfetchConfig;
use pith_protocol::tool::FetchMetadata;

mod fetch;
pub mod guard;
mod html;
mod target;

pub use target::{Host, MAX_SHOWN, Target, UrlError, shown_url};

pub(crate) struct Webfetch {
    config: WebfetchConfig,
    /// The configured rules (no session grants): asked again for every redirect, and whether
    /// they name a host and port.
    rules: Permissions,
}

impl Webfetch {
    pub(crate) fn new(config: WebfetchConfig, rules: Permissions) -> Webfetch {
        Webfetch { config, rules }
    }
}

#[derive(Deserialize)]
struct Input {
    url: String,
}

impl From<UrlError> for ToolError {
    fn from(e: UrlError) -> ToolError {
        ToolError::Failed(e.to_string())
    }
}

/// What a response body is, from its content type: text pith can show, or not.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary(String),
}

fn kind_of(content_type: Option<&str>) -> Kind {
    let ct = content_type
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match ct.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "" => Kind::Text,
        t if t.starts_with("text/")
            || t.ends_with("+json")
            || t.ends_with("+xml")
            || matches!(
                t,
                "application/json" | "application/xml" | "application/javascript"
            ) =>
        {
            Kind::Text
        }
        other => Kind::Binary(other.to_string()),
    }
}

#[async_trait::async_trait]
impl Tool for Webfetch {
    fn name(&self) -> &'static str {
        pith_protocol::tool::Builtin::WebFetch.as_str()
    }

    fn description(&self) -> &'static str {
        include_str!("../../../../prompts/tools/webfetch.md")
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The http(s) URL to read"}
            },
            "required": ["url"]
        })
    }

    fn precheck(&self, input: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let url = input.get("url").and_then(Value::as_str).unwrap_or_default();
        let target = Target::parse(url)?;
        // an inward address written as one, or `localhost`: refused whatever the user would
        // answer (a deny rule for it says so itself)
        let inward = match target.host {
            Host::Ip(ip) => guard::inward(ip).map(|kind| (ip, kind)),
            Host::Name(_) if guard::is_this_machine(&target.host) => {
                Some((std::net::Ipv4Addr::LOCALHOST.into(), "loopback"))
            }
            Host::Name(_) => None,
        };
        if let Some((ip, kind)) = inward
            && !self.rules.fetch_named(&target)
            && self.rules.fetch_action(&target) != pith_config::PermissionAction::Deny
        {
            return Err(fetch::inward(&target, ip, kind));
        }
        Ok(())
    }

    async fn run(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let input: Input = parse_input("webfetch", input)?;
        let target = Target::parse(&input.url)?;
        let fetch = fetch::fetch(&self.config, &self.rules, target, &ctx.cancel);
        let page = tokio::select! {
            page = fetch => page?,
            () = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        Ok(ToolOutput {
            title: page.url.clone(),
            output: page.text,
            metadata: FetchMetadata {
                url: page.url,
                status: page.status,
            }
            .into(),
            meta: ToolMeta::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ports_and_refused_urls() {
        let t = Target::parse("https://Docs.rs./tokio/latest").unwrap();
        assert_eq!(
            (t.host.spelled(), t.port, t.default_port()),
            ("docs.rs".into(), 443, true)
        );
        let t = Target::parse("http://127.0.0.1:8080/x").unwrap();
        assert_eq!(t.host_port(), "127.0.0.1:8080");
        assert!(!t.default_port());
        // one spelling per address
        for (url, host) in [
            ("http://[::ffff:127.0.0.1]/", "127.0.0.1"),
            ("http://[::ffff:7f00:1]/", "127.0.0.1"),
            ("http://[64:ff9b::a9fe:a9fe]/", "169.254.169.254"),
            ("http://2130706433/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("http://[0:0::1]/", "[::1]"),
        ] {
            assert_eq!(Target::parse(url).unwrap().host.spelled(), host, "{url}");
        }
        for bad in [
            "file:///etc/passwd",
            "ftp://example.com/x",
            "not a url",
            "https://user:pw@example.com/",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn redirects_that_stay_where_the_user_agreed() {
        let here = Target::parse("http://docs.rs/a").unwrap();
        let same = |u: &str| here.same_place(&Target::parse(u).unwrap());
        assert!(same("http://DOCS.rs:80/b?c"));
        assert!(same("https://docs.rs/b"));
        assert!(!same("https://docs.rs:8443/b"));
        assert!(!same("http://docs.rs:8080/b"));
        assert!(!same("http://api.docs.rs/b"));
        let secure = Target::parse("https://docs.rs/").unwrap();
        assert!(
            !secure.same_place(&here),
            "https to http is not the same place"
        );
    }

    #[test]
    fn a_url_is_shown_whole_on_one_line_or_cut_in_the_middle() {
        let url = "https://example.com/upload?data=c2VjcmV0";
        assert_eq!(Target::parse(url).unwrap().shown(), url);
        assert_eq!(shown_url("http://a/\nb\x1b[2J"), "http://a/\\nb\\u{1b}[2J");
        let long = format!("https://example.com/{}?key=END", "a".repeat(5000));
        let shown = shown_url(&long);
        assert_eq!(shown.chars().count(), MAX_SHOWN);
        assert!(shown.starts_with("https://example.com/aaa"), "{shown}");
        assert!(
            shown.ends_with("?key=END") && shown.contains('…'),
            "{shown}"
        );
    }

    #[test]
    fn inward_addresses_are_refused_before_the_user_is_asked() {
        let ws = crate::testutil::Ws::new();
        let rules = |t: &str| {
            let table: toml::Table = toml::from_str(t).unwrap();
            let permission = table.get("permission").cloned().unwrap();
            Permissions::new(&permission.try_into().unwrap())
        };
        let tool = Webfetch::new(
            WebfetchConfig::default(),
            rules(
                "[permission.webfetch]\n\"localhost:8080\" = \"allow\"\n\"10.0.0.1\" = \"deny\"\n",
            ),
        );
        let check = |u: &str| tool.precheck(&json!({ "url": u }), &ws.ctx);
        for url in [
            "http://127.0.0.1:8080/",
            "http://localhost/",
            "http://app.localhost:8080/",
            "http://[fd00::1]/",
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let e = check(url).unwrap_err().to_string();
            assert!(
                e.contains("not fetched") && e.contains("names its host and port"),
                "{url}: {e}"
            );
        }
        assert!(check("http://localhost:8080/x").is_ok());
        // a deny rule refuses it in its own words
        assert!(check("http://10.0.0.1/").is_ok());
        assert!(check("https://docs.rs/").is_ok());
    }

    #[test]
    fn content_types() {
        assert_eq!(kind_of(Some("text/html; charset=utf-8")), Kind::Html);
        assert_eq!(kind_of(Some("application/json")), Kind::Text);
        assert_eq!(kind_of(Some("application/vnd.api+json")), Kind::Text);
        assert_eq!(kind_of(Some("text/plain")), Kind::Text);
        assert_eq!(kind_of(None), Kind::Text);
        assert_eq!(kind_of(Some("image/png")), Kind::Binary("image/png".into()));
        assert!(matches!(
            kind_of(Some("application/octet-stream")),
            Kind::Binary(_)
        ));
    }
}
