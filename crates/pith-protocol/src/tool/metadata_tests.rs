//! Each tool's typed metadata is stored as the JSON the tools wrote by hand before (same keys,
//! same order), and reads back by the tool's name as itself: written typed → JSON → read typed
//! → equal.

use serde_json::json;

use super::*;

/// The stored text of `m`, a call of `tool`'s, and what it reads back as (itself: checked).
fn stored(tool: &str, m: impl Into<ToolMetadata>) -> (String, ToolMetadata) {
    let m = m.into();
    let text = serde_json::to_string(&m).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let back = ToolMetadata::read(&ToolName::parse(tool), &value);
    assert_eq!(back.as_ref(), Some(&m), "{tool}: {text}");
    (text, m)
}

/// What the stored `metadata` of a call of `tool` reads back as.
fn read(tool: &str, metadata: Value) -> Option<ToolMetadata> {
    ToolMetadata::read(&ToolName::parse(tool), &metadata)
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
        job: None,
    }
}

#[test]
fn bash_is_stored_as_before() {
    let (text, outcome) = stored("bash", bash(Some(2), false));
    assert_eq!(
        text,
        r#"{"command":"ls","description":null,"exit_code":2,"signal":null,"timed_out":false,"interrupted":false,"sandboxed":true}"#
    );
    assert_eq!(outcome.exit_code(), Some(2));
    assert!(!outcome.sandbox_denied());
    let (text, outcome) = stored("bash", bash(None, true));
    assert!(
        text.ends_with(r#""sandboxed":true,"sandbox_denied":true}"#),
        "{text}"
    );
    assert_eq!(
        (outcome.exit_code(), outcome.sandbox_denied()),
        (None, true)
    );
}

#[test]
fn edit_and_write_are_stored_as_before() {
    let edit = EditMetadata {
        path: "/w/a.rs".into(),
        replacements: 3,
        diff: "-a\n+b".into(),
    };
    let (text, outcome) = stored("edit", edit);
    assert_eq!(
        text,
        r#"{"path":"/w/a.rs","replacements":3,"diff":"-a\n+b"}"#
    );
    assert_eq!(outcome.diff(), Some("-a\n+b"));
    let overwrite = WriteMetadata {
        path: "/w/o.txt".into(),
        created: false,
        bytes: 2,
        diff: Some("-ho\n+hi".into()),
    };
    let (text, outcome) = stored("write", overwrite);
    assert_eq!(
        text,
        r#"{"path":"/w/o.txt","created":false,"bytes":2,"diff":"-ho\n+hi"}"#
    );
    assert_eq!(outcome.diff(), Some("-ho\n+hi"));
    let create = WriteMetadata {
        path: "/w/n.txt".into(),
        created: true,
        bytes: 2,
        diff: None,
    };
    let (text, outcome) = stored("write", create);
    assert_eq!(
        text,
        r#"{"path":"/w/n.txt","created":true,"bytes":2,"diff":null}"#
    );
    assert_eq!(outcome.diff(), None);
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
    let (text, outcome) = stored("read", lines);
    assert_eq!(
        text,
        r#"{"path":"/w/a.rs","offset":5,"lines_shown":10,"total_lines":40,"total_exact":true,"partial":true,"invalid_utf8":false}"#
    );
    let extent = ReadExtent::Lines {
        shown: Some(10),
        total: Some(40),
        offset: Some(5),
    };
    assert_eq!(outcome.read_extent(), Some(extent));

    let (text, outcome) = stored("read", ReadMetadata::empty("/w/e".into()));
    assert_eq!(text, r#"{"path":"/w/e","total_lines":0,"lines_shown":0}"#);
    let extent = ReadExtent::Lines {
        shown: Some(0),
        total: Some(0),
        offset: None,
    };
    assert_eq!(outcome.read_extent(), Some(extent));

    let image = ReadMetadata::Image {
        path: "/w/i.png".into(),
        mime: "image/png".into(),
        size: 7,
        image: Marker,
    };
    let (text, outcome) = stored("read", image);
    assert_eq!(
        text,
        r#"{"path":"/w/i.png","mime":"image/png","size":7,"image":true}"#
    );
    let png = Some("image/png".to_string());
    assert_eq!(outcome.read_extent(), Some(ReadExtent::Image { mime: png }));

    let dir = ReadMetadata::Directory {
        path: "/w/src".into(),
        directory: Marker,
        entries: 3,
    };
    let (text, outcome) = stored("read", dir);
    assert_eq!(text, r#"{"path":"/w/src","directory":true,"entries":3}"#);
    assert_eq!(
        outcome.read_extent(),
        Some(ReadExtent::Directory { entries: 3 })
    );
}

#[test]
fn todos_are_stored_as_before() {
    let list = json!([{"id": "1", "content": "x", "status": "pending", "priority": "medium"}]);
    let todos = serde_json::from_value::<Vec<Todo>>(list).unwrap();
    let (text, outcome) = stored("todowrite", TodoMetadata { todos });
    assert_eq!(
        text,
        r#"{"todos":[{"id":"1","content":"x","status":"pending","priority":"medium"}]}"#
    );
    assert_eq!(outcome.todos().map(<[Todo]>::len), Some(1));
    assert_eq!(outcome.todos().unwrap()[0].status, TodoStatus::Pending);
    // an item of another shape reads as its text, pending
    let odd = read(
        "todowrite",
        json!({"todos": [{"content": "y", "status": 3}]}),
    );
    let odd = odd.as_ref().and_then(|o| o.todos()).unwrap();
    assert_eq!(
        (odd[0].content.as_str(), odd[0].status),
        ("y", TodoStatus::Pending)
    );
}

#[test]
fn searches_fetches_and_recalls_are_stored_as_before() {
    let grep = GrepMetadata {
        matches: 3,
        files: 2,
        capped: false,
        protected: 1,
    };
    let (text, outcome) = stored("grep", grep);
    assert_eq!(
        text,
        r#"{"matches":3,"files":2,"capped":false,"protected":1}"#
    );
    assert_eq!((outcome.diff(), outcome.exit_code()), (None, None));
    let (text, _) = stored("glob", CountMetadata::of(130, 100));
    assert_eq!(text, r#"{"count":130,"capped":true}"#);
    let (text, _) = stored("list", CountMetadata::of(0, 100));
    assert_eq!(text, r#"{"count":0,"capped":false}"#);
    let fetch = FetchMetadata {
        url: "https://x.org/".into(),
        status: 200,
    };
    let (text, outcome) = stored("webfetch", fetch);
    assert_eq!(text, r#"{"url":"https://x.org/","status":200}"#);
    assert_eq!(outcome.read_extent(), None);
    let search = SearchMetadata {
        query: "rust 2024".into(),
        backend: "searxng".into(),
        hits: vec![SearchHit {
            title: "Rust".into(),
            url: "https://rust-lang.org/".into(),
        }],
    };
    let (text, outcome) = stored("websearch", search.clone());
    assert_eq!(
        text,
        r#"{"query":"rust 2024","backend":"searxng","hits":[{"title":"Rust","url":"https://rust-lang.org/"}]}"#
    );
    assert_eq!(outcome.search(), Some(&search));
    let recall = RecallMetadata {
        recalled: "c1".into(),
        tool: "bash".into(),
    };
    let (text, _) = stored("recall", recall);
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
    let (text, outcome) = stored("task", task.clone());
    assert_eq!(
        text,
        r#"{"session_id":"ses_c","agent":"explore","tokens":1200,"cost":0.25}"#
    );
    assert_eq!(outcome.task(), Some(&task));
    assert_eq!(outcome.mcp(), None);
    // a free run's cost is stored as 0.0, and an integer reads back too
    let stored = json!({"session_id": "s", "agent": "a", "tokens": 0, "cost": 0});
    let cost = read("task", stored).and_then(|o| o.task().map(|t| t.cost));
    assert_eq!(cost, Some(0.0));
}

#[test]
fn mcp_calls_are_stored_as_before() {
    let plain = McpMetadata {
        mcp_server: "github".into(),
        mcp_tool: "create_issue".into(),
        files: Vec::new(),
    };
    let (text, outcome) = stored("github_create_issue", plain.clone());
    assert_eq!(text, r#"{"mcp_server":"github","mcp_tool":"create_issue"}"#);
    assert_eq!(outcome.mcp(), Some(&plain));
    let with_files = McpMetadata {
        mcp_server: "shot".into(),
        mcp_tool: "take".into(),
        files: vec![McpFile {
            path: "/d/tool-output/mcp_1.png".into(),
            mime: "image/png".into(),
            bytes: 68,
        }],
    };
    let (text, outcome) = stored("shot_take", with_files.clone());
    assert_eq!(
        text,
        r#"{"mcp_server":"shot","mcp_tool":"take","files":[{"path":"/d/tool-output/mcp_1.png","mime":"image/png","bytes":68}]}"#
    );
    assert_eq!(outcome.mcp(), Some(&with_files));
    assert_eq!(outcome.task(), None);
}

#[test]
fn tool_searches_are_stored_as_before() {
    let search = ToolSearchMetadata {
        loaded: vec!["docs_search".into(), "github_create_issue".into()],
    };
    let (text, outcome) = stored("tool_search", search);
    assert_eq!(text, r#"{"loaded":["docs_search","github_create_issue"]}"#);
    let names = ["docs_search", "github_create_issue"].map(String::from);
    assert_eq!(outcome.loaded(), Some(&names[..]));
    // a name stored otherwise than as a string is skipped, as the loader always did
    let odd = json!({"loaded": ["a_b", 3]});
    let loaded = read("tool_search", odd);
    assert_eq!(
        loaded.as_ref().and_then(|o| o.loaded()),
        Some(&["a_b".to_string()][..])
    );
}
