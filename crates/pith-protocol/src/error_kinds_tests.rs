//! Every `ErrorKind` is documented in ARCHITECTURE.md §2, under its wire name, with what a front
//! end does about it; and §2 names no kind the engine does not have.

use super::event::ErrorKind;

/// Every kind. The match makes a new kind fail to compile here until it is listed (and then
/// the test below asks for its row in §2).
fn all() -> Vec<ErrorKind> {
    use ErrorKind::*;
    let kinds = vec![
        Provider,
        ContextOverflow,
        Compaction,
        Model,
        Session,
        Export,
        NoModel,
        Store,
        Loop,
        Internal,
        Undo,
        Mcp,
        Command,
    ];
    for k in &kinds {
        match k {
            Provider | ContextOverflow | Compaction | Model | Session | Export | NoModel
            | Store | Loop | Internal | Undo | Mcp | Command => {}
        }
    }
    kinds
}

fn wire_name(kind: ErrorKind) -> String {
    serde_json::to_value(kind)
        .expect("a kind serialises")
        .as_str()
        .expect("a kind is a string")
        .to_string()
}

/// The rows of the error-kind table in §2: `| \`kind\` | … |`.
fn documented() -> Vec<String> {
    let doc = include_str!("../../../ARCHITECTURE.md");
    let start = doc.find("\n## 2.").expect("ARCHITECTURE.md has §2");
    let end = start
        + doc[start..]
            .find("\n## 3.")
            .expect("ARCHITECTURE.md has §3");
    doc[start..end]
        .lines()
        .filter_map(|l| {
            l.trim_start()
                .strip_prefix("| `")?
                .split_once('`')
                .map(|(k, _)| k.to_string())
        })
        .collect()
}

#[test]
fn every_error_kind_is_documented_in_architecture_section_2() {
    let documented = documented();
    let kinds: Vec<String> = all().into_iter().map(wire_name).collect();
    for kind in &kinds {
        assert!(
            documented.contains(kind),
            "ErrorKind `{kind}` has no row in ARCHITECTURE.md §2"
        );
    }
    for name in &documented {
        assert!(
            kinds.contains(name),
            "ARCHITECTURE.md §2 documents `{name}`, which is no ErrorKind"
        );
        let back: ErrorKind = serde_json::from_value(serde_json::Value::String(name.clone()))
            .expect("a documented kind parses");
        assert_eq!(&wire_name(back), name);
    }
}
