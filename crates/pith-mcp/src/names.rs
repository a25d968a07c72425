//! The names MCP tools are offered under: `SERVER_TOOL`. Server names hold no `_` (the config
//! checks it), so the first `_` always separates the two. Providers accept 1–64 characters of
//! `[A-Za-z0-9_-]`; anything else becomes `_`, and a name too long is cut and made unique with a
//! hash of the full name.

/// The longest tool name providers accept.
pub(crate) const MAX_NAME: usize = 64;

/// The name the model calls the server's tool `tool` of `server` by.
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("{server}_{tool}");
    let clean: String = full
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.len() <= MAX_NAME && clean == full {
        return clean;
    }
    // Changed or cut: a hash of the original keeps two such names apart.
    let hash = fnv(full.as_bytes());
    let suffix = format!("_{:08x}", hash as u32);
    let keep = MAX_NAME - suffix.len();
    if clean.len() + suffix.len() <= MAX_NAME {
        return format!("{clean}{suffix}");
    }
    format!("{}{suffix}", &clean[..keep])
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept() {
        assert_eq!(tool_name("github", "create_issue"), "github_create_issue");
        assert_eq!(
            tool_name("chrome-devtools", "click"),
            "chrome-devtools_click"
        );
    }

    #[test]
    fn odd_and_long_names_fit_the_providers_rules_and_stay_apart() {
        let a = tool_name("srv", "get.item");
        let b = tool_name("srv", "get/item");
        assert!(a.starts_with("srv_get_item_"), "{a}");
        assert_ne!(a, b);
        let long = tool_name("server", &"x".repeat(100));
        let long2 = tool_name("server", &format!("{}y", "x".repeat(99)));
        for n in [&a, &b, &long, &long2] {
            assert!(n.len() <= MAX_NAME, "{n}");
            assert!(
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
        }
        assert_ne!(long, long2);
    }
}
