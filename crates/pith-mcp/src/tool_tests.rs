use serde_json::json;

use super::*;

fn result(v: Value) -> CallToolResult {
    serde_json::from_value(v).unwrap()
}

#[test]
fn text_images_links_and_resources_become_text_the_model_can_use() {
    let dir = tempfile::tempdir().unwrap();
    let r = result(json!({
        "content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain", "size": 2048, "description": "the\nfile"},
            {"type": "resource", "resource": {"uri": "mem://notes", "text": "note body"}},
            {"type": "resource", "resource": {"uri": "mem://bin", "blob": "AAEC", "mimeType": "application/pdf"}}
        ]
    }));
    let out = render(&r, "srv", "get", dir.path()).unwrap();
    assert_eq!(out.title, "srv: get");
    assert!(
        out.output
            .starts_with("first\n\n[image: image/png, 8 B, saved to "),
        "{}",
        out.output
    );
    assert!(
        out.output
            .contains("[resource link: a.txt <file:///a.txt> (text/plain, 2.0 KB) — the file]"),
        "{}",
        out.output
    );
    assert!(out.output.contains("[resource mem://notes]\nnote body"));
    assert!(out.output.contains("(from mem://bin)"));
    let files = out.metadata["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let png = std::path::Path::new(files[0]["path"].as_str().unwrap());
    assert_eq!(std::fs::read(png).unwrap(), b"\x89PNG\r\n\x1a\n");
    assert!(png.starts_with(pith_tools::truncate::output_dir(dir.path())));
    assert_eq!(png.extension().unwrap(), "png");
}

#[test]
fn error_results_are_tool_errors_and_structured_content_is_shown_when_alone() {
    let dir = tempfile::tempdir().unwrap();
    let err = render(
        &result(json!({"content": [{"type": "text", "text": "no such repo"}], "isError": true})),
        "gh",
        "get_repo",
        dir.path(),
    )
    .unwrap_err();
    assert_eq!(err, ToolError::Failed("no such repo".into()));
    let silent = render(
        &result(json!({"content": [], "isError": true})),
        "gh",
        "x",
        dir.path(),
    );
    assert!(silent.unwrap_err().to_string().contains("gh_x failed"));
    let structured = render(
        &result(json!({"content": [], "structuredContent": {"temp": 21}})),
        "w",
        "t",
        dir.path(),
    )
    .unwrap();
    assert!(structured.output.contains("\"temp\": 21"));
    let empty = render(&result(json!({"content": []})), "w", "t", dir.path()).unwrap();
    assert_eq!(empty.output, "(no output)");
}

#[test]
fn bad_base64_is_said_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    let r = result(json!({"content": [{"type": "image", "data": "%%%", "mimeType": "image/png"}]}));
    let out = render(&r, "s", "t", dir.path()).unwrap();
    assert!(out.output.contains("not valid base64"), "{}", out.output);
    assert!(out.metadata.get("files").is_none());
}

#[test]
fn schemas_are_objects_and_descriptions_are_bounded() {
    let tool: rmcp::model::Tool = serde_json::from_value(json!({
        "name": "t",
        "description": "x".repeat(DESCRIPTION_MAX + 100),
        "inputSchema": {}
    }))
    .unwrap();
    assert_eq!(schema(&tool), json!({"type": "object", "properties": {}}));
    let d = describe("srv", &tool);
    assert!(d.len() < DESCRIPTION_MAX + 40, "{}", d.len());
    assert!(d.ends_with("(MCP server srv)"));
}
