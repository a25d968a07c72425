//! What a call asked, viewed by its tool's name.

use serde_json::json;

use super::*;

/// The parsed name of `tool` (leaked: a test's views borrow it).
fn n(tool: &str) -> &'static ToolName {
    Box::leak(Box::new(ToolName::parse(tool)))
}

#[test]
fn inputs_by_tool() {
    let bash = json!({"command": "ls -l", "description": "list"});
    assert_eq!(ToolInput::of(n("bash"), &bash).command(), Some("ls -l"));
    assert_eq!(ToolInput::of(n("bash"), &bash).path(), None);
    let read = json!({"file_path": "src/a.rs", "offset": 10});
    assert_eq!(
        ToolInput::of(n("read"), &read),
        ToolInput::Read {
            path: Some("src/a.rs"),
            offset: Some(10)
        }
    );
    let older = json!({"filePath": "b.rs"});
    assert_eq!(ToolInput::of(n("edit"), &older).path(), Some("b.rs"));
    let grep = json!({"pattern": "fn main", "path": "src"});
    assert_eq!(
        ToolInput::of(n("grep"), &grep),
        ToolInput::Search {
            pattern: Some("fn main"),
            within: Some("src"),
            path: Some("src"),
        }
    );
    let filtered = json!({"pattern": "x", "include": "*.rs"});
    assert_eq!(
        ToolInput::of(n("grep"), &filtered),
        ToolInput::Search {
            pattern: Some("x"),
            within: Some("*.rs"),
            path: None,
        }
    );
    let edit = json!({"file_path": "a", "old_string": "x", "new_string": "y"});
    assert_eq!(
        ToolInput::of(n("edit"), &edit),
        ToolInput::Edit {
            path: Some("a"),
            old: Some("x"),
            new: Some("y")
        }
    );
    let write = json!({"file_path": "a", "content": "hi"});
    assert_eq!(
        ToolInput::of(n("write"), &write),
        ToolInput::Write {
            path: Some("a"),
            content: Some("hi")
        }
    );
    let todos = json!({"todos": [{"content": "x"}]});
    assert!(matches!(
        ToolInput::of(n("todowrite"), &todos),
        ToolInput::Todos { todos: Some([_]) }
    ));
    assert_eq!(
        ToolInput::of(n("github_search"), &grep),
        ToolInput::Mcp {
            server: "github",
            tool: "search",
            path: Some("src")
        }
    );
    assert_eq!(
        ToolInput::of(n("bash"), &json!({"command": 3})).command(),
        None
    );
}

#[test]
fn a_file_tool_names_its_file_once_or_not_at_all() {
    let arg = |input: Value| match ToolInput::file_arg(&input) {
        FileArg::One(p) => Ok(Some(p.to_string())),
        FileArg::Missing => Ok(None),
        FileArg::Several => Err(()),
    };
    for key in ["file_path", "path", "filePath"] {
        assert_eq!(arg(json!({key: "a.rs"})), Ok(Some("a.rs".into())), "{key}");
    }
    // `file` is no key of pith's file tools: they refuse the call
    assert_eq!(arg(json!({"file": "a.rs"})), Ok(None));
    assert_eq!(arg(json!({"file_path": 3})), Ok(None));
    assert_eq!(arg(json!({})), Ok(None));
    // named twice, whatever the values: which one is meant is not known, none is picked
    for (a, b) in [
        ("file_path", "path"),
        ("path", "filePath"),
        ("filePath", "file_path"),
    ] {
        assert_eq!(arg(json!({a: "x", b: "y"})), Err(()), "{a} + {b}");
        assert_eq!(arg(json!({a: 3, b: "y"})), Err(()), "{a} + {b}");
    }
}

#[test]
fn pith_s_searches_and_listings_look_where_the_tool_does() {
    // grep, glob and list take their directory under `path` alone
    let misnamed = json!({"pattern": "x", "file_path": "/etc", "path": "src"});
    for tool in ["grep", "glob"] {
        let ToolInput::Search { path, .. } = ToolInput::of(n(tool), &misnamed) else {
            panic!("{tool}");
        };
        assert_eq!(path, Some("src"), "{tool}");
    }
    assert_eq!(
        ToolInput::of(n("list"), &misnamed),
        ToolInput::List { path: Some("src") }
    );
    let elsewhere = json!({"file_path": "/etc"});
    assert_eq!(
        ToolInput::of(n("list"), &elsewhere),
        ToolInput::List { path: None }
    );
    // names pith does not have (other agents' `ls`, `shell`, `patch`): no guess
    for other in ["ls", "shell", "patch", "multiedit", "search", "fetch"] {
        assert_eq!(
            ToolInput::of(n(other), &elsewhere),
            ToolInput::Other,
            "{other}"
        );
    }
    let mcp = ToolInput::of(n("github_search"), &elsewhere);
    assert_eq!(mcp.path(), None, "an MCP tool's path is not a file tool's");
}

#[test]
fn the_gist_of_arguments_no_view_reads() {
    // (written in key order: the order a map keeps depends on serde_json's features)
    let mcp = json!({"a_query": "is:open", "path": "src", "repo": 7});
    assert_eq!(ToolInput::first_string(&mcp), Some("is:open"));
    assert_eq!(ToolInput::common_argument(&mcp).as_deref(), Some("src"));
    let numbers = json!({"n": 1, "command": 3});
    assert_eq!(ToolInput::first_string(&numbers), None);
    assert_eq!(ToolInput::common_argument(&numbers).as_deref(), Some("3"));
    let ordered = json!({"pattern": "p", "file_path": "f", "command": "c"});
    assert_eq!(ToolInput::common_argument(&ordered).as_deref(), Some("c"));
    for none in [json!({}), json!(null), json!("text"), json!(["a"])] {
        assert_eq!(ToolInput::first_string(&none), None, "{none}");
        assert_eq!(ToolInput::common_argument(&none), None, "{none}");
    }
}
