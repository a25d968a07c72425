//! Each tool's typed metadata is stored as the JSON the tools wrote by hand before (same keys,
//! same order), and reads back as the outcome it describes.

use serde_json::json;

use super::*;

/// The stored text of `m`, and the outcome it reads back as.
fn stored(m: impl Into<ToolMetadata>) -> (String, ToolOutcome) {
    let m = m.into();
    let text = serde_json::to_string(&m).unwrap();
    (text, ToolOutcome::of(&m.to_value()))
}

fn bash(exit_code: Option<i32>, sandbox_denied: bool) -> BashMetadata {
    BashMetadata {
        command: "ls".into(),
        description: None,
        exit_code,
        signal: None,
        timed_out: false,
        interrupted: false,
        sandboxed: true,
        sandbox_denied,
    }
}

#[test]
fn bash_is_stored_as_before() {
    let (text, outcome) = stored(bash(Some(2), false));
    assert_eq!(
        text,
        r#"{"command":"ls","description":null,"exit_code":2,"signal":null,"timed_out":false,"interrupted":false,"sandboxed":true}"#
    );
    assert_eq!(outcome.exit_code, Some(2));
    assert!(!outcome.sandbox_denied);
    let (text, outcome) = stored(bash(None, true));
    assert!(
        text.ends_with(r#""sandboxed":true,"sandbox_denied":true}"#),
        "{text}"
    );
    assert_eq!((outcome.exit_code, outcome.sandbox_denied), (None, true));
}

#[test]
fn edit_and_write_are_stored_as_before() {
    let edit = EditMetadata {
        path: "/w/a.rs".into(),
        replacements: 3,
        diff: "-a\n+b".into(),
    };
    let (text, outcome) = stored(edit);
    assert_eq!(
        text,
        r#"{"path":"/w/a.rs","replacements":3,"diff":"-a\n+b"}"#
    );
    assert_eq!(outcome.diff.as_deref(), Some("-a\n+b"));
    let overwrite = WriteMetadata {
        path: "/w/o.txt".into(),
        created: false,
        bytes: 2,
        diff: Some("-ho\n+hi".into()),
    };
    let (text, outcome) = stored(overwrite);
    assert_eq!(
        text,
        r#"{"path":"/w/o.txt","created":false,"bytes":2,"diff":"-ho\n+hi"}"#
    );
    assert_eq!(outcome.diff.as_deref(), Some("-ho\n+hi"));
    let create = WriteMetadata {
        path: "/w/n.txt".into(),
        created: true,
        bytes: 2,
        diff: None,
    };
    let (text, outcome) = stored(create);
    assert_eq!(
        text,
        r#"{"path":"/w/n.txt","created":true,"bytes":2,"diff":null}"#
    );
    assert_eq!(outcome.diff, None);
}

#[test]
fn reads_are_stored_as_before() {
    let lines = ReadMetadata::Lines {
        path: "/w/a.rs".into(),
        offset: 5,
        lines_shown: 10,
        total_lines: 40,
        total_exact: true,
        partial: true,
        invalid_utf8: false,
    };
    let (text, outcome) = stored(lines);
    assert_eq!(
        text,
        r#"{"path":"/w/a.rs","offset":5,"lines_shown":10,"total_lines":40,"total_exact":true,"partial":true,"invalid_utf8":false}"#
    );
    let extent = ReadExtent::Lines {
        shown: Some(10),
        total: Some(40),
        offset: Some(5),
    };
    assert_eq!(outcome.read, Some(extent));

    let (text, outcome) = stored(ReadMetadata::empty("/w/e".into()));
    assert_eq!(text, r#"{"path":"/w/e","total_lines":0,"lines_shown":0}"#);
    let extent = ReadExtent::Lines {
        shown: Some(0),
        total: Some(0),
        offset: None,
    };
    assert_eq!(outcome.read, Some(extent));

    let image = ReadMetadata::Image {
        path: "/w/i.png".into(),
        mime: "image/png".into(),
        size: 7,
        image: Marker,
    };
    let (text, outcome) = stored(image);
    assert_eq!(
        text,
        r#"{"path":"/w/i.png","mime":"image/png","size":7,"image":true}"#
    );
    let png = Some("image/png".to_string());
    assert_eq!(outcome.read, Some(ReadExtent::Image { mime: png }));

    let dir = ReadMetadata::Directory {
        path: "/w/src".into(),
        directory: Marker,
        entries: 3,
    };
    let (text, outcome) = stored(dir);
    assert_eq!(text, r#"{"path":"/w/src","directory":true,"entries":3}"#);
    assert_eq!(outcome.read, Some(ReadExtent::Directory { entries: 3 }));
}

#[test]
fn todos_are_stored_as_before() {
    let list = json!([{"content": "x", "status": "pending", "priority": "medium"}]);
    let (text, outcome) = stored(TodoMetadata {
        todos: list.clone(),
    });
    assert_eq!(text, format!(r#"{{"todos":{list}}}"#));
    assert_eq!(outcome.todos, list.as_array().cloned());
}

#[test]
fn searches_fetches_and_recalls_are_stored_as_before() {
    let grep = GrepMetadata {
        matches: 3,
        files: 2,
        capped: false,
        protected: 1,
    };
    let (text, outcome) = stored(grep);
    assert_eq!(
        text,
        r#"{"matches":3,"files":2,"capped":false,"protected":1}"#
    );
    assert_eq!(outcome, ToolOutcome::default());
    let (text, _) = stored(CountMetadata::of(130, 100));
    assert_eq!(text, r#"{"count":130,"capped":true}"#);
    let (text, _) = stored(CountMetadata::of(0, 100));
    assert_eq!(text, r#"{"count":0,"capped":false}"#);
    let fetch = FetchMetadata {
        url: "https://x.org/".into(),
        status: 200,
    };
    let (text, outcome) = stored(fetch);
    assert_eq!(text, r#"{"url":"https://x.org/","status":200}"#);
    assert_eq!(outcome, ToolOutcome::default());
    let recall = RecallMetadata {
        recalled: "c1".into(),
        tool: "bash".into(),
    };
    let (text, _) = stored(recall);
    assert_eq!(text, r#"{"recalled":"c1","tool":"bash"}"#);
}

#[test]
fn the_value_is_the_text() {
    let m = ToolMetadata::from(bash(Some(0), false));
    let value: Value = bash(Some(0), false).into();
    assert_eq!(value, m.to_value());
    assert_eq!(value["exit_code"], 0);
}

#[test]
fn a_saved_output_is_added_after_the_tools_keys() {
    let mut metadata: Value = CountMetadata::of(3, 100).into();
    SavedOutput::at("/d/out.txt".into()).add_to(&mut metadata);
    // (the order of the keys in a `Value` is the workspace's: serde_json's preserve_order)
    let expected =
        json!({"count": 3, "capped": false, "truncated": true, "output_path": "/d/out.txt"});
    assert_eq!(metadata, expected);
    let mut null = Value::Null;
    SavedOutput::at("/d/out.txt".into()).add_to(&mut null);
    assert_eq!(null, Value::Null);
}

#[test]
fn tasks_are_stored_as_before() {
    let task = TaskMetadata {
        session_id: "ses_c".into(),
        agent: "explore".into(),
        tokens: 1200,
        cost: 0.25,
    };
    let (text, outcome) = stored(task.clone());
    assert_eq!(
        text,
        r#"{"session_id":"ses_c","agent":"explore","tokens":1200,"cost":0.25}"#
    );
    assert_eq!(outcome.task, Some(task));
    assert_eq!(outcome.mcp, None);
    // a free run's cost is stored as 0.0, and an integer reads back too
    let stored = json!({"session_id": "s", "agent": "a", "tokens": 0, "cost": 0});
    assert_eq!(ToolOutcome::of(&stored).task.map(|t| t.cost), Some(0.0));
}

#[test]
fn mcp_calls_are_stored_as_before() {
    let plain = McpMetadata {
        mcp_server: "github".into(),
        mcp_tool: "create_issue".into(),
        files: Vec::new(),
    };
    let (text, outcome) = stored(plain.clone());
    assert_eq!(text, r#"{"mcp_server":"github","mcp_tool":"create_issue"}"#);
    assert_eq!(outcome.mcp, Some(plain));
    let with_files = McpMetadata {
        mcp_server: "shot".into(),
        mcp_tool: "take".into(),
        files: vec![McpFile {
            path: "/d/tool-output/mcp_1.png".into(),
            mime: "image/png".into(),
            bytes: 68,
        }],
    };
    let (text, outcome) = stored(with_files.clone());
    assert_eq!(
        text,
        r#"{"mcp_server":"shot","mcp_tool":"take","files":[{"path":"/d/tool-output/mcp_1.png","mime":"image/png","bytes":68}]}"#
    );
    assert_eq!(outcome.mcp, Some(with_files));
    assert_eq!(outcome.task, None);
}

#[test]
fn tool_searches_are_stored_as_before() {
    let search = ToolSearchMetadata {
        loaded: vec!["docs_search".into(), "github_create_issue".into()],
    };
    let (text, outcome) = stored(search);
    assert_eq!(text, r#"{"loaded":["docs_search","github_create_issue"]}"#);
    let names = ["docs_search", "github_create_issue"].map(String::from);
    assert_eq!(outcome.loaded, Some(names.to_vec()));
    // a name stored otherwise than as a string is skipped, as the loader always did
    let odd = json!({"loaded": ["a_b", 3]});
    assert_eq!(ToolOutcome::of(&odd).loaded, Some(vec!["a_b".to_string()]));
}
