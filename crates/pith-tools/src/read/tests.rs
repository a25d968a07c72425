use serde_json::json;

use super::lines::{COUNT_LIMIT, Stop, number_lines};
use super::*;
use crate::path::mtime_ms;
use crate::testutil::Ws;

async fn run(ws: &Ws, input: Value) -> Result<ToolOutput, ToolError> {
    Read.run(input, &ws.ctx).await
}

#[tokio::test]
async fn numbers_lines_and_records_mtime() {
    let ws = Ws::new();
    let p = ws.write("src/a.rs", "fn main() {\r\n    println!();\n}\n");
    let out = run(&ws, json!({"file_path": "src/a.rs"})).await.unwrap();
    assert_eq!(
        out.output,
        "     1\tfn main() {\n     2\t    println!();\n     3\t}\n\n(End of file: 3 lines)"
    );
    assert_eq!(out.title, "src/a.rs");
    let recorded = ws.ctx.state.read_files.lock().unwrap().get(&p).copied();
    assert_eq!(recorded, Some(mtime_ms(&std::fs::metadata(&p).unwrap())));
}

#[tokio::test]
async fn offset_and_limit() {
    let ws = Ws::new();
    let text: String = (1..=50).map(|i| format!("l{i}\n")).collect();
    ws.write("f.txt", &text);
    let out = run(
        &ws,
        json!({"file_path": ws.path("f.txt"), "offset": 10, "limit": 3}),
    )
    .await
    .unwrap();
    assert!(
        out.output
            .starts_with("    10\tl10\n    11\tl11\n    12\tl12\n\n"),
        "{}",
        out.output
    );
    assert!(
        out.output
            .contains("Showing lines 10-12 of 50. Use offset=13"),
        "{}",
        out.output
    );
    let err = run(&ws, json!({"file_path": "f.txt", "offset": 51}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("past the end") && err.contains("50 lines"),
        "{err}"
    );
    let err = run(&ws, json!({"file_path": "f.txt", "limit": 0}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("limit"), "{err}");
}

#[tokio::test]
async fn default_limit_is_2000_lines() {
    let ws = Ws::new();
    let text: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    ws.write("big.txt", &text);
    let out = run(&ws, json!({"file_path": "big.txt"})).await.unwrap();
    assert!(out.output.contains("  2000\t2000\n") && !out.output.contains("  2001\t2001"));
    assert!(out.output.contains("Use offset=2001"));
    assert_eq!(out.metadata["total_lines"], 2500);
}

#[tokio::test]
async fn byte_budget_caps_output() {
    let ws = Ws::new();
    let text: String = (1..=1000).map(|i| format!("{i:0>200}\n")).collect();
    ws.write("wide.txt", &text);
    let out = run(&ws, json!({"file_path": "wide.txt"})).await.unwrap();
    assert!(
        out.output.len() <= ws.ctx.output.max_bytes,
        "{}",
        out.output.len()
    );
    assert!(out.output.contains("output size limit reached"));
}

#[tokio::test]
async fn long_lines_are_cut() {
    let ws = Ws::new();
    ws.write("min.js", format!("{}\nshort\n", "x".repeat(5000)));
    let out = run(&ws, json!({"file_path": "min.js"})).await.unwrap();
    assert!(out.output.contains("[line cut: 5000 characters]"));
    assert!(!out.output.contains(&"x".repeat(2001)));
    assert!(out.output.contains("     2\tshort"));
}

#[tokio::test]
async fn missing_file_suggests_similar_names() {
    let ws = Ws::new();
    ws.write("src/config.rs", "");
    ws.write("src/other.rs", "");
    let err = run(&ws, json!({"file_path": "src/confg.rs"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("File not found: src/confg.rs"), "{err}");
    assert!(err.contains("Did you mean: src/config.rs?"), "{err}");
    let err = run(&ws, json!({"file_path": "nodir/x.rs"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not exist either"), "{err}");
}

#[tokio::test]
async fn binary_refused_image_reported() {
    let ws = Ws::new();
    ws.write("blob.dat", [0u8, 1, 2, 3, 0, 255, 10]);
    let err = run(&ws, json!({"file_path": "blob.dat"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("binary file"), "{err}");
    ws.write("lib.so", "not really binary");
    assert!(
        run(&ws, json!({"file_path": "lib.so"}))
            .await
            .unwrap_err()
            .to_string()
            .contains("binary")
    );
    ws.write("pic.PNG", [0x89, b'P', b'N', b'G', 0, 0]);
    let out = run(&ws, json!({"file_path": "pic.PNG"})).await.unwrap();
    assert!(
        out.output.contains("image/png") && out.output.contains("6 B"),
        "{}",
        out.output
    );
    assert_eq!(out.metadata["size"], 6);
}

#[tokio::test]
async fn not_utf8_is_read_lossily_with_a_note() {
    let ws = Ws::new();
    ws.write("latin1.txt", b"caf\xe9\nok\n");
    let out = run(&ws, json!({"file_path": "latin1.txt"})).await.unwrap();
    assert!(out.output.contains("not valid UTF-8"), "{}", out.output);
    assert!(out.output.contains("caf\u{FFFD}"));
    assert_eq!(out.metadata["invalid_utf8"], true);
}

#[tokio::test]
async fn empty_file() {
    let ws = Ws::new();
    ws.write("empty", "");
    let out = run(&ws, json!({"file_path": "empty"})).await.unwrap();
    assert!(out.output.contains("is empty"));
}

#[tokio::test]
async fn directory_lists_entries() {
    let ws = Ws::new();
    ws.write("d/b.txt", "");
    ws.write("d/a/x.txt", "");
    let out = run(&ws, json!({"file_path": "d"})).await.unwrap();
    assert_eq!(out.output, "d is a directory with 2 entries:\na/\nb.txt\n");
}

#[tokio::test]
async fn outside_and_symlinked_paths_resolve() {
    let ws = Ws::new();
    let outside = ws.root().join("outside.txt");
    std::fs::write(&outside, "secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.path("link.txt")).unwrap();
    // The tool itself reads (permission is checked before); the title shows the real path.
    let out = run(&ws, json!({"file_path": "link.txt"})).await.unwrap();
    assert_eq!(out.title, outside.display().to_string());
    let out = run(&ws, json!({"file_path": "../outside.txt"}))
        .await
        .unwrap();
    assert!(out.output.contains("secret"));
}

#[tokio::test]
async fn bad_input() {
    let ws = Ws::new();
    assert!(
        run(&ws, json!({}))
            .await
            .unwrap_err()
            .to_string()
            .contains("missing field `file_path`")
    );
    assert!(
        run(&ws, json!({"file_path": "x", "offset": "a"}))
            .await
            .unwrap_err()
            .to_string()
            .starts_with("Invalid input for read")
    );
    assert!(
        run(&ws, json!({"file_path": "x", "offset": -1}))
            .await
            .unwrap_err()
            .to_string()
            .contains("offset")
    );
}

#[cfg(unix)]
#[tokio::test]
async fn special_files_are_refused_at_once() {
    let ws = Ws::new();
    let fifo = ws.path("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Nothing ever writes to it: a read that opened it would hang here.
    let err = run(&ws, json!({"file_path": "pipe"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("named pipe (FIFO)"), "{err}");
    assert!(err.contains("timeout"), "{err}");
    for dev in ["/dev/zero", "/dev/null", "/dev/stdin"] {
        if std::fs::metadata(dev).is_ok() {
            let err = run(&ws, json!({"file_path": dev}))
                .await
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("character device")
                    || err.contains("named pipe")
                    || err.contains("socket"),
                "{dev}: {err}"
            );
        }
    }
}

/// An endless line is read in bounded memory, and reading stops when asked.
#[test]
fn an_endless_line_is_bounded_and_stoppable() {
    let calls = std::cell::Cell::new(0u32);
    let stop = || {
        calls.set(calls.get() + 1);
        calls.get() > 2000
    };
    let reader = std::io::BufReader::new(std::io::repeat(b'a'));
    let r = number_lines(reader, 1, 10, 50_000, COUNT_LIMIT, &stop);
    assert!(matches!(r, Err(Stop::Cancelled)));
}

#[test]
fn a_huge_line_is_cut_with_its_length() {
    let line = "é".repeat(30_000);
    let text = format!("{line}\nnext\n");
    let page = number_lines(text.as_bytes(), 1, 10, 1 << 20, COUNT_LIMIT, &|| false).unwrap();
    assert_eq!(page.total, 2);
    assert!(
        page.text.contains("… [line cut: 30000 characters]"),
        "{}",
        &page.text[..100]
    );
    assert!(!page.invalid_utf8);
    assert!(page.text.contains("     2\tnext"));
    assert!(page.text.len() < 10_000);
}

#[test]
fn an_endless_line_is_cut_at_the_count_limit() {
    let reader = std::io::BufReader::new(std::io::repeat(b'a'));
    let page = number_lines(reader, 1, 10, 50_000, 1 << 20, &|| false).unwrap();
    assert_eq!((page.count, page.total, page.total_exact), (1, 1, false));
    assert!(
        page.text.contains("[line cut: more than "),
        "{}",
        &page.text[2000..]
    );
}

#[test]
fn counting_past_the_page_is_bounded() {
    let reader = std::io::BufReader::new(std::io::repeat(b'\n'));
    let page = number_lines(reader, 1, 5, 50_000, 1 << 20, &|| false).unwrap();
    assert_eq!(page.count, 5);
    assert!(!page.total_exact);
    assert!(page.total > 1 << 20);
    // A last line without a newline counts, and is not shown past the page.
    let page = number_lines(&b"a\nb\nc"[..], 1, 2, 50_000, COUNT_LIMIT, &|| false).unwrap();
    assert_eq!((page.count, page.total), (2, 3));
    assert!(!page.text.contains("c"));
    let page = number_lines(&b"a\nb\nc"[..], 3, 2, 50_000, COUNT_LIMIT, &|| false).unwrap();
    assert_eq!(page.text, "     3\tc\n");
}
