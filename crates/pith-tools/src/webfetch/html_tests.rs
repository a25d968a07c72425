use super::*;

fn never() -> bool {
    false
}

fn nested(n: usize) -> String {
    format!(
        "<html><body>{}deepest words{}</body></html>",
        "<div>".repeat(n),
        "</div>".repeat(n)
    )
}

#[test]
fn scripts_styles_data_and_boilerplate_are_dropped() {
    let page = r#"<html><head><title>T</title><style>p { x: 1 }</style>
<script>if (a < b) { document.write("</div>secretScript") }</script>
<SCRIPT id="__NEXT_DATA__" type="application/json">{"secretBlob":1}</SCRIPT >
</head><body><header>Banner</header><nav><nav>Inner</nav>Menu</nav>
<noscript>NoJs</noscript><template><p>Tpl</p></template><svg><script>x</script><text>Svg</text></svg>
<!-- a comment --><main><article><header><h1>Title</h1></header><p>Body <b>text</b></p></article></main>
<aside>Ad</aside><footer>Foot</footer></body></html>"#;
    let out = convert(page, usize::MAX, &never).unwrap().0;
    assert!(out.contains("# Title"), "{out}");
    assert!(out.contains("Body **text**"), "{out}");
    for gone in [
        "x: 1",
        "secretScript",
        "secretBlob",
        "Banner",
        "Inner",
        "Menu",
        "NoJs",
        "Tpl",
        "Svg",
        "comment",
        "Ad",
        "Foot",
    ] {
        assert!(!out.contains(gone), "{gone}: {out}");
    }
}

#[test]
fn text_that_looks_like_markup_survives() {
    let out = convert(
        "<p>a < b and c < d, <textarea><b>kept</b></textarea></p>",
        usize::MAX,
        &never,
    )
    .unwrap()
    .0;
    assert!(out.contains("a < b and c < d"), "{out}");
    // the textarea's markup is its text, not bold
    assert!(out.contains("kept") && !out.contains("**kept**"), "{out}");
}

#[test]
fn deep_nesting_is_flattened_and_converted() {
    for n in [20_000, 200_000] {
        let cleaned = clean(&nested(n), &never).unwrap();
        let deepest = cleaned.matches("<div>").count();
        assert!(deepest < MAX_DEPTH, "{n}: {deepest} open divs kept");
        // on a small stack: the flattened page converts without recursing deep
        let text = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || convert(&nested(n), usize::MAX, &never).unwrap().0)
            .unwrap()
            .join()
            .unwrap();
        assert!(text.contains("deepest words"), "{n}");
        assert!(text.len() < 4096, "{n}: {} bytes", text.len());
    }
}

#[test]
fn lists_without_end_tags_are_not_flattened() {
    let items: String = (0..1000).map(|i| format!("<li>item {i}")).collect();
    let out = convert(&format!("<ul>{items}</ul>"), usize::MAX, &never)
        .unwrap()
        .0;
    assert!(out.contains("*   item 999"), "{}", &out[out.len() - 200..]);
    assert!(!out.contains("*   *"), "items nested in items");
}

#[test]
fn a_stop_ends_the_pass() {
    let stopped = || true;
    assert_eq!(clean(&nested(200_000), &stopped), Err(Stopped));
}

#[tokio::test]
async fn an_interrupt_stops_waiting_for_the_conversion() {
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = to_markdown(nested(200_000), usize::MAX, &cancel, DEADLINE).await;
    assert!(matches!(r, Err(ToolError::Interrupted)), "{r:?}");
    let r = to_markdown(
        nested(200_000),
        usize::MAX,
        &CancellationToken::new(),
        Duration::ZERO,
    )
    .await;
    assert!(r.is_err_and(|e| e.to_string().contains("to convert")));
}

#[test]
fn what_is_left_is_converted_up_to_its_bound() {
    let page = "<p>words and words</p>".repeat(10_000);
    let out = convert(&page, 1000, &never).unwrap().0;
    assert!(
        out.len() < 1000 && out.contains("words and words"),
        "{}",
        out.len()
    );
    // the bound counts what is left, not the scripts
    let page = format!("<script>{}</script><p>the article</p>", "x".repeat(100_000));
    assert_eq!(convert(&page, 1000, &never).unwrap().0, "the article");
}

#[test]
fn a_dropped_element_left_open_ends_with_its_parent() {
    let page = "<div><nav><ul><li>Menu</ul></div><p>Content</p><aside><div><div>Ad</div></div>";
    let (out, _) = convert(page, usize::MAX, &never).unwrap();
    assert_eq!(out, "Content");
    // nested elements of the same name inside it do not end it early
    let page = "<div><nav><div>Menu</div>More menu</nav>Text</div>";
    assert_eq!(convert(page, usize::MAX, &never).unwrap().0, "Text");
}
