//! MCP tools, judged by their server's table.

use super::*;

fn with_mcp(mut p: Permissions) -> Permissions {
    let mut tools = std::collections::HashMap::new();
    for (full, server, name) in [
        ("github_get_issue", "github", "get_issue"),
        ("github_delete_repo", "github", "delete_repo"),
        ("docs_search", "docs", "search"),
    ] {
        tools.insert(full.to_string(), (server.to_string(), name.to_string()));
    }
    p.set_mcp_tools(tools);
    p
}

#[test]
fn mcp_tools_ask_by_default_and_follow_their_servers_rules() {
    let ws = Ws::new();
    let ctx = &ws.ctx;
    let mut p = with_mcp(defaults_only());
    let r = ask(p.check("github_get_issue", &json!({"n": 1}), ctx));
    assert_eq!(r.patterns, ["get_issue"], "always grants the one tool");
    p.reply(&r, PermissionReply::Always);
    assert!(is_allow(&p.check(
        "github_get_issue",
        &json!({"n": 2}),
        ctx
    )));
    ask(p.check("github_delete_repo", &json!({}), ctx));

    let mut p = with_mcp(Permissions::new(&rules(
        r#"
        [permission]
        docs = "allow"
        [permission.github]
        "*" = "allow"
        "delete_*" = "deny"
        "#,
    )));
    assert!(is_allow(&p.check("docs_search", &json!({}), ctx)));
    assert!(is_allow(&p.check("github_get_issue", &json!({}), ctx)));
    let m = deny(p.check("github_delete_repo", &json!({}), ctx));
    assert!(m.contains("delete_*"), "{m}");
    // A tool no server owns is its own table, as before.
    ask(p.check("unknown_tool", &json!({}), ctx));
}
