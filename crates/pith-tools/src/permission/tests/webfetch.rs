//! `[permission.webfetch]` by host and port: a rule without a port is the default port (a deny
//! without one, every port), this machine judged by any of its names, the rules the tool asks
//! again on a redirect, and the question naming the whole URL.

use super::*;
use crate::webfetch::Target;

fn fetch(u: &str) -> serde_json::Value {
    json!({ "url": u })
}

fn target(u: &str) -> Target {
    Target::parse(u).unwrap()
}

#[test]
fn rules_are_keyed_on_host_and_port() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = Permissions::new(&rules(
        "[permission.webfetch]\n\"docs.rs\" = \"allow\"\n\"localhost:8080\" = \"allow\"\n",
    ));
    assert!(is_allow(&p.check(
        "webfetch",
        &fetch("https://docs.rs/x"),
        ctx
    )));
    assert!(is_allow(&p.check(
        "webfetch",
        &fetch("http://docs.rs/x"),
        ctx
    )));
    // the host alone is its default port, not another one
    let r = ask(p.check("webfetch", &fetch("https://docs.rs:8443/x"), ctx));
    assert_eq!(r.patterns, ["docs.rs:8443"]);
    assert!(is_allow(&p.check(
        "webfetch",
        &fetch("http://localhost:8080/"),
        ctx
    )));
    // a same-host redirect to another port is another subject
    ask(p.check("webfetch", &fetch("http://localhost:8081/"), ctx));
    assert_eq!(
        p.fetch_action(&target("http://localhost:8081/")),
        PermissionAction::Ask
    );
    assert_eq!(
        p.fetch_action(&target("http://localhost:8080/a")),
        PermissionAction::Allow
    );
    // only a rule naming the host and port lets an inward address be fetched
    assert!(p.fetch_named(&target("http://LOCALHOST:8080/")));
    assert!(!p.fetch_named(&target("http://127.0.0.1:8080/")));
    assert!(!p.fetch_named(&target("https://docs.rs/")));
    let star = Permissions::new(&rules("[permission.webfetch]\n\"*\" = \"allow\"\n"));
    assert!(!star.fetch_named(&target("http://localhost:8080/")));
}

#[test]
fn a_localhost_deny_holds_for_every_spelling_and_port() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    for deny_rule in ["localhost", "127.0.0.1"] {
        let mut p = Permissions::new(&rules(&format!(
            "[permission.webfetch]\n\"*\" = \"allow\"\n\"{deny_rule}\" = \"deny\"\n"
        )));
        for url in [
            "http://localhost/",
            "http://localhost:8080/",
            "http://127.0.0.1:8080/",
            "http://127.0.0.2/",
            "http://[::1]:9000/",
            "http://0.0.0.0/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::]:80/",
            "http://app.localhost/",
            "http://2130706433/",
        ] {
            deny(p.check("webfetch", &fetch(url), ctx));
            assert_eq!(
                p.fetch_action(&target(url)),
                PermissionAction::Deny,
                "{url}"
            );
        }
        // by the address a name resolved to
        let ip = "127.0.0.5".parse().unwrap();
        let t = target("http://rebind.example/");
        assert_eq!(p.fetch_address_action(&t, ip), PermissionAction::Deny);
        assert!(is_allow(&p.check(
            "webfetch",
            &fetch("https://docs.rs/"),
            ctx
        )));
    }
    // a more specific allow still wins
    let mut p = Permissions::new(&rules(
        "[permission.webfetch]\n\"localhost\" = \"deny\"\n\"localhost:8080\" = \"allow\"\n",
    ));
    assert!(is_allow(&p.check(
        "webfetch",
        &fetch("http://localhost:8080/"),
        ctx
    )));
    deny(p.check("webfetch", &fetch("http://localhost:8081/"), ctx));
}

#[test]
fn the_question_names_the_whole_url() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = defaults_only();
    let url = "https://example.com/upload?data=c2VjcmV0LWtleQ&more=1";
    let r = ask(p.check("webfetch", &fetch(url), ctx));
    assert_eq!(r.title, url);
    assert_eq!(r.patterns, ["example.com"]);
    let long = format!("https://example.com/?q={}&tail=END", "x".repeat(3000));
    let r = ask(p.check("webfetch", &fetch(&long), ctx));
    assert!(
        r.title.chars().count() <= crate::webfetch::MAX_SHOWN,
        "{}",
        r.title
    );
    assert!(
        r.title.ends_with("&tail=END") && r.title.contains('…'),
        "{}",
        r.title
    );
}
