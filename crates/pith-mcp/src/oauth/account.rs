//! Who is signed in, for display only (`/mcp`, `pith mcp list`, the login's last line): the
//! `email`, `preferred_username`, `name` or `sub` claim of the token response's OpenID
//! `id_token`, else of the access token when it is a JWT, else nothing. The signature is not
//! checked, so the name is never used for anything but showing it: the server chose it, so it is
//! bounded and its control and invisible characters are written as escapes.

use base64::Engine as _;
use rmcp::transport::auth::OAuthTokenResponse;

/// A token longer than this is not decoded (real ones take a few kB).
const MAX_TOKEN: usize = 16 * 1024;
/// The account as shown: at most this many characters.
const MAX_ACCOUNT: usize = 80;
/// The claims that name the user, the most telling first.
const CLAIMS: [&str; 4] = ["email", "preferred_username", "name", "sub"];

/// The account a token response names, if it names one.
pub(crate) fn of_response(token: &OAuthTokenResponse) -> Option<String> {
    use oauth2::TokenResponse as _;
    let id_token = token
        .extra_fields()
        .0
        .get("id_token")
        .and_then(|v| v.as_str())
        .and_then(of_jwt);
    id_token.or_else(|| of_jwt(token.access_token().secret()))
}

/// The account a JWT's claims name; `None` for anything that is not a JWT with one.
pub(crate) fn of_jwt(token: &str) -> Option<String> {
    if token.len() > MAX_TOKEN {
        return None;
    }
    let mut parts = token.trim().split('.');
    let (Some(_header), Some(payload), Some(_signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes).ok()?;
    CLAIMS.iter().find_map(|claim| {
        let value = claims.get(*claim)?.as_str()?;
        let shown = pith_protocol::text::escape_one_line(value.trim(), MAX_ACCOUNT);
        (!shown.is_empty()).then_some(shown)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: serde_json::Value) -> String {
        let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!(
            "{}.{}.{}",
            b64(br#"{"alg":"RS256","typ":"JWT"}"#),
            b64(claims.to_string().as_bytes()),
            b64(b"not-checked")
        )
    }

    fn response(extra: serde_json::Value) -> OAuthTokenResponse {
        let mut body = serde_json::json!({"access_token": "opaque-0000", "token_type": "Bearer"});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(body).unwrap()
    }

    #[test]
    fn the_most_telling_claim_of_a_jwt_names_the_account() {
        let all = serde_json::json!({"sub": "u-1", "name": "Alice", "preferred_username": "alice", "email": "alice@example.com"});
        assert_eq!(of_jwt(&jwt(all)).as_deref(), Some("alice@example.com"));
        let some = serde_json::json!({"sub": "u-1", "preferred_username": "alice"});
        assert_eq!(of_jwt(&jwt(some)).as_deref(), Some("alice"));
        let sub = serde_json::json!({"sub": "u-1", "email": 7, "name": "  "});
        assert_eq!(of_jwt(&jwt(sub)).as_deref(), Some("u-1"));
        assert_eq!(of_jwt(&jwt(serde_json::json!({"scope": "x"}))), None);
    }

    #[test]
    fn an_opaque_token_or_a_broken_jwt_names_nothing() {
        for token in [
            "opaque-0000",
            "a.b",
            "a.b.c.d",
            "x.!!!.y",
            "x.bm90IGpzb24.y",  // "not json"
            "x.WyJhbGljZSJd.y", // ["alice"]: not an object
            "",
        ] {
            assert_eq!(of_jwt(token), None, "{token}");
        }
    }

    #[test]
    fn the_id_token_comes_before_the_access_token() {
        let id = jwt(serde_json::json!({"email": "alice@example.com"}));
        let access = jwt(serde_json::json!({"sub": "svc-42"}));
        let both = serde_json::json!({"id_token": id, "access_token": access});
        assert_eq!(
            of_response(&response(both)).as_deref(),
            Some("alice@example.com")
        );
        let only_access = serde_json::json!({"access_token": access});
        assert_eq!(
            of_response(&response(only_access)).as_deref(),
            Some("svc-42")
        );
        // An id_token that is not a JWT: the access token is asked next.
        let bad_id = serde_json::json!({"id_token": 12, "access_token": access});
        assert_eq!(of_response(&response(bad_id)).as_deref(), Some("svc-42"));
        assert_eq!(of_response(&response(serde_json::json!({}))), None);
    }

    /// The server chooses the name: escapes and direction marks are shown as escapes, a long one
    /// is cut, a huge token is not decoded at all.
    #[test]
    fn a_hostile_claim_is_shown_escaped_and_bounded() {
        let evil = "\u{1b}]52;c;AAAA\u{7}\u{1b}[2Jmallory\u{202e}moc.elpmaxe@\nnext line";
        let shown = of_jwt(&jwt(serde_json::json!({"email": evil}))).unwrap();
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert!(!shown.contains('\u{202e}'), "{shown:?}");
        assert!(
            shown.contains("\\u{1b}") && shown.contains("\\n"),
            "{shown:?}"
        );

        let long = "a".repeat(5_000);
        let shown = of_jwt(&jwt(serde_json::json!({"email": long}))).unwrap();
        assert!(shown.chars().count() <= MAX_ACCOUNT + 1, "{}", shown.len());
        assert!(shown.ends_with('…'));

        let huge = jwt(serde_json::json!({"email": "a@b.c", "pad": "x".repeat(MAX_TOKEN)}));
        assert_eq!(of_jwt(&huge), None);
    }
}
