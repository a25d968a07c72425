use std::net::{IpAddr, SocketAddr};

use super::*;

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn inward_addresses_by_every_spelling() {
    for (addr, kind) in [
        ("127.0.0.1", "loopback"),
        ("127.0.0.2", "loopback"),
        ("::1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "unique-local"),
        ("fd12:3456::1", "unique-local"),
        ("100.64.0.1", "CGNAT"),
        ("100.127.255.255", "CGNAT"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::127.0.0.1", "loopback"),
        ("64:ff9b::7f00:1", "loopback"),
        ("64:ff9b::a9fe:a9fe", "link-local"),
        ("2002:7f00:1::", "loopback"),
    ] {
        let got = inward(ip(addr));
        assert!(got.is_some_and(|k| k.contains(kind)), "{addr}: {got:?}");
    }
    for public in [
        "93.184.216.34",
        "172.32.0.1",
        "100.128.0.1",
        "2606:4700::1111",
        "64:ff9b::5db8:d822",
    ] {
        assert_eq!(inward(ip(public)), None, "{public}");
    }
}

fn lookup(
    addrs: &'static [&'static str],
) -> impl FnOnce(String, u16) -> std::future::Ready<std::io::Result<Vec<SocketAddr>>> {
    move |_, port| {
        std::future::ready(Ok(addrs
            .iter()
            .map(|a| SocketAddr::new(ip(a), port))
            .collect()))
    }
}

#[tokio::test]
async fn names_are_judged_by_what_they_resolve_to() {
    let t = Target::parse("http://rebind.example:8080/").unwrap();
    // a name that resolves inward is refused, unless a rule names it with its port
    let r = addresses(&t, false, lookup(&["127.0.0.1"])).await;
    assert_eq!(
        r,
        Err(Refusal::Inward {
            addr: ip("127.0.0.1"),
            kind: "loopback"
        })
    );
    let r = addresses(&t, true, lookup(&["127.0.0.1"])).await.unwrap();
    assert_eq!(r, vec![SocketAddr::new(ip("127.0.0.1"), 8080)]);
    // only the public addresses of a mixed answer are kept
    let r = addresses(&t, false, lookup(&["10.0.0.1", "93.184.216.34"]))
        .await
        .unwrap();
    assert_eq!(r, vec![SocketAddr::new(ip("93.184.216.34"), 8080)]);
    // an address written in the URL is never looked up
    let t = Target::parse("http://[::ffff:169.254.169.254]/").unwrap();
    let r = addresses(&t, false, |_, _| async { panic!("looked up") }).await;
    assert!(matches!(r, Err(Refusal::Inward { kind, .. }) if kind.contains("link-local")));
}

#[tokio::test]
async fn the_client_resolves_only_what_was_checked() {
    use reqwest::dns::Resolve;
    let pins = Pinned::default();
    pins.pin("docs.rs", vec![SocketAddr::new(ip("93.184.216.34"), 443)]);
    let name = |n: &str| n.parse::<reqwest::dns::Name>().unwrap();
    let got: Vec<SocketAddr> = pins.resolve(name("DOCS.rs")).await.unwrap().collect();
    assert_eq!(got, vec![SocketAddr::new(ip("93.184.216.34"), 443)]);
    assert!(pins.resolve(name("evil.example")).await.is_err());
}

#[test]
fn this_machine_by_any_name() {
    for url in [
        "http://localhost/",
        "http://api.localhost/",
        "http://127.0.0.2/",
        "http://0.0.0.0/",
        "http://[::]/",
        "http://[::ffff:127.0.0.1]/",
    ] {
        assert!(is_this_machine(&Target::parse(url).unwrap().host), "{url}");
    }
    assert!(!is_this_machine(
        &Target::parse("http://10.0.0.1/").unwrap().host
    ));
}
