//! The address guard: which addresses are this machine or its networks (loopback, link-local
//! with the cloud metadata address, private, unique-local, CGNAT, multicast, broadcast,
//! unspecified, and IPv6 spellings of those), name resolution done once per hop and checked,
//! and the resolver the HTTP client must use, which answers only with the checked addresses —
//! so a name that resolves differently the second time (DNS rebinding) cannot swap them.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::target::{Host, Target};

/// What kind of inward address `ip` is, or `None` for a public one.
pub(crate) fn inward(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(a) => inward_v4(a),
        IpAddr::V6(a) => inward_v6(a),
    }
}

fn inward_v4(a: Ipv4Addr) -> Option<&'static str> {
    let [b0, b1, ..] = a.octets();
    Some(if a.is_loopback() {
        "loopback"
    } else if a.is_unspecified() || b0 == 0 {
        "unspecified (this machine)"
    } else if a.is_link_local() {
        "link-local (cloud metadata)"
    } else if a.is_private() {
        "private"
    } else if b0 == 100 && (64..128).contains(&b1) {
        "shared (CGNAT)"
    } else if a.is_multicast() {
        "multicast"
    } else if a.is_broadcast() || b0 >= 240 {
        "broadcast or reserved"
    } else if b0 == 192 && b1 == 0 && a.octets()[2] == 0 {
        "reserved (IETF)"
    } else {
        return None;
    })
}

fn inward_v6(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    Some(if a.is_loopback() {
        "loopback"
    } else if a.is_unspecified() {
        "unspecified (this machine)"
    } else if s[0] & 0xffc0 == 0xfe80 {
        "link-local"
    } else if s[0] & 0xffc0 == 0xfec0 || s[0] & 0xfe00 == 0xfc00 {
        "unique-local (private)"
    } else if a.is_multicast() {
        "multicast"
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        "NAT64 (local use)"
    } else if s[0] == 0x2002 {
        // 6to4: the IPv4 address in the next 32 bits
        let v4 = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return inward_v4(v4);
    } else {
        return None;
    })
}

/// One spelling per address: an IPv4 address carried in IPv6 (mapped `::ffff:a.b.c.d`,
/// compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is that IPv4 address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    let IpAddr::V6(a) = ip else { return ip };
    if let Some(v4) = a.to_ipv4_mapped() {
        return IpAddr::V4(v4);
    }
    let s = a.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let compatible = s[..6].iter().all(|&x| x == 0) && !a.is_loopback() && !a.is_unspecified();
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0);
    if compatible || nat64 {
        IpAddr::V4(tail)
    } else {
        ip
    }
}

/// Whether `host` is this machine by any spelling: loopback, unspecified, `localhost`.
pub(crate) fn is_this_machine(host: &Host) -> bool {
    match host {
        Host::Ip(ip) => {
            let ip = canonical(*ip);
            ip.is_loopback()
                || ip.is_unspecified()
                || matches!(ip, IpAddr::V4(a) if a.octets()[0] == 0)
        }
        Host::Name(n) => n == "localhost" || n.ends_with(".localhost"),
    }
}

/// Why a hop may not be fetched.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Every address the host has is inward (the first one and its kind).
    Inward { addr: IpAddr, kind: &'static str },
    /// The name did not resolve.
    Unresolved(String),
}

/// The addresses `target` may be fetched at: its own address or what its name resolves to,
/// without the inward ones unless `named` (a rule names this host and port). `lookup` is
/// only asked about names.
pub(crate) async fn addresses<F, Fut>(
    target: &Target,
    named: bool,
    lookup: F,
) -> Result<Vec<SocketAddr>, Refusal>
where
    F: FnOnce(String, u16) -> Fut,
    Fut: Future<Output = std::io::Result<Vec<SocketAddr>>>,
{
    let all = match &target.host {
        Host::Ip(ip) => vec![SocketAddr::new(*ip, target.port)],
        Host::Name(n) => lookup(n.clone(), target.port)
            .await
            .map_err(|e| Refusal::Unresolved(e.to_string()))?,
    };
    if all.is_empty() {
        return Err(Refusal::Unresolved("no address".into()));
    }
    if named {
        return Ok(all);
    }
    let public: Vec<SocketAddr> = all
        .iter()
        .copied()
        .filter(|a| inward(a.ip()).is_none())
        .collect();
    if public.is_empty() {
        let addr = all[0].ip();
        let kind = inward(addr).unwrap_or("inward");
        return Err(Refusal::Inward { addr, kind });
    }
    Ok(public)
}

/// The system resolver, within `timeout`.
pub(crate) async fn system_lookup(
    name: String,
    port: u16,
    timeout: Duration,
) -> std::io::Result<Vec<SocketAddr>> {
    match tokio::time::timeout(timeout, tokio::net::lookup_host((name.as_str(), port))).await {
        Ok(r) => r.map(Iterator::collect),
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the name did not resolve in time",
        )),
    }
}

/// The HTTP client's resolver: answers a name only with the addresses pinned for it (checked
/// by the guard), and refuses every other name.
#[derive(Default)]
pub(crate) struct Pinned(Mutex<HashMap<String, Vec<SocketAddr>>>);

impl Pinned {
    pub(crate) fn pin(&self, name: &str, addrs: Vec<SocketAddr>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(name.to_ascii_lowercase(), addrs);
    }
}

impl reqwest::dns::Resolve for Pinned {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let key = name.as_str().trim_end_matches('.').to_ascii_lowercase();
        let found = map.get(&key).cloned();
        Box::pin(async move {
            match found {
                Some(addrs) => Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs),
                None => Err(format!("{key} was not checked before connecting").into()),
            }
        })
    }
}

/// A shared [`Pinned`], as the client builder takes it.
pub(crate) fn pinned() -> Arc<Pinned> {
    Arc::new(Pinned::default())
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
