//! `[permission.webfetch]`: rules are matched on `host:port`. A rule without a port names the
//! scheme's default port (`"docs.rs"` is `https://docs.rs` and `http://docs.rs`, not
//! `docs.rs:8080`), except that a deny rule without a port denies every port. Any spelling of
//! this machine (`127.0.0.2`, `[::1]`, `0.0.0.0`, `[::ffff:127.0.0.1]`, `foo.localhost`) is
//! also judged as `localhost`, `127.0.0.1` and `[::1]`, so a deny for one holds for all; an
//! allow holds only for the host as written. The tool asks these rules again for each
//! redirect, and whether a rule names a host and port (what lets it fetch an inward address).

use std::net::IpAddr;

use super::subjects::Subject;
use super::{PermissionAction, Permissions};
use crate::webfetch::guard::is_this_machine;
use crate::webfetch::{Host, Target};

const TABLE: &str = "webfetch";
/// The names this machine is judged by, besides the one written.
const THIS_MACHINE: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

impl Permissions {
    /// The subject of fetching `target`: what the rules match and what "always" grants.
    pub(super) fn fetch_subject(&self, target: &Target) -> Subject {
        let grant = if target.default_port() {
            target.host.spelled()
        } else {
            target.host_port()
        };
        Subject {
            table: TABLE.into(),
            forms: self.fetch_forms(&target.host, target.port, target.default_port()),
            grant,
            firm: None,
            refused: None,
        }
    }

    /// What the configured rules say about fetching `target` (session grants are not asked:
    /// the tool asks this for a redirect, which the user never saw).
    pub(crate) fn fetch_action(&self, target: &Target) -> PermissionAction {
        let forms = self.fetch_forms(&target.host, target.port, target.default_port());
        self.fetch_decide(&forms).0
    }

    /// What the configured rules say about connecting to `ip` for `target` (judged by the
    /// address a name resolved to: a deny rule for it holds).
    pub(crate) fn fetch_address_action(&self, target: &Target, ip: IpAddr) -> PermissionAction {
        let forms = self.fetch_forms(&Host::Ip(ip), target.port, target.default_port());
        self.fetch_decide(&forms).0
    }

    /// Whether a configured allow or ask rule names `target`'s host and port exactly (as
    /// `"localhost:8080"`): only then is an inward address fetched.
    pub(crate) fn fetch_named(&self, target: &Target) -> bool {
        let want = target.host_port();
        self.rules.get(TABLE).is_some_and(|rules| {
            rules.iter().any(|r| {
                r.action != PermissionAction::Deny && r.pattern.trim().eq_ignore_ascii_case(&want)
            })
        })
    }

    /// The action for `forms` and the length of the pattern that decided it.
    fn fetch_decide(&self, forms: &[String]) -> (PermissionAction, usize) {
        let forms: Vec<&str> = forms.iter().map(String::as_str).collect();
        let (action, pattern) = self.decide(TABLE, &forms);
        (action, pattern.map_or(0, |p| p.chars().count()))
    }

    /// The forms a host and port are matched as: their own; or, when a deny rule is more
    /// specific than what their own forms meet, the forms that rule matches (the host on any
    /// port, this machine by any name).
    fn fetch_forms(&self, host: &Host, port: u16, default_port: bool) -> Vec<String> {
        let spelled = host.spelled();
        let mut own = vec![format!("{spelled}:{port}")];
        if default_port {
            own.push(spelled.clone());
        }
        let (_, own_len) = self.fetch_decide(&own);
        let mut others = vec![spelled.clone()];
        if is_this_machine(host) {
            for alias in THIS_MACHINE {
                others.push(format!("{alias}:{port}"));
                others.push(alias.to_string());
            }
            others.push("::1".into());
        }
        // the longest deny rule any of them meets, if it is longer than what decided `own`
        let denied = others
            .into_iter()
            .filter_map(|f| match self.fetch_decide(std::slice::from_ref(&f)) {
                (PermissionAction::Deny, n) if n > own_len => Some((n, f)),
                _ => None,
            })
            .max_by_key(|(n, _)| *n);
        match denied {
            Some((_, form)) => vec![format!("{spelled}:{port}"), form],
            None => own,
        }
    }
}
