//! What a hook added to the model's context, shown as such: "hook user_prompt_submit added: …",
//! folded when long (Ctrl+O or a click opens it). The engine wraps that text in
//! `<hook-context event="…">` tags for the model; the user reads it without them.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::cell_text::{dim, indent, plain_lines};

/// Lines of hook text shown while the note is folded.
const FOLDED_LINES: usize = 3;

/// The hook's event (as written in the config, `user_prompt_submit`) and the text it added,
/// when `text` is a hook's context note.
pub(crate) fn parse(text: &str) -> Option<(String, &str)> {
    let rest = text.strip_prefix("<hook-context event=\"")?;
    let (event, rest) = rest.split_once("\">")?;
    let body = rest.trim_start_matches('\n');
    let body = body.strip_suffix("</hook-context>").unwrap_or(body);
    Some((config_name(event), body.trim_end()))
}

/// `UserPromptSubmit` as the config names it: `user_prompt_submit`.
fn config_name(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The note's lines at `width`, folded to a few lines unless `expanded`.
pub(crate) fn lines(event: &str, body: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let style = dim().add_modifier(Modifier::ITALIC);
    let head = format!("hook {event} added: ");
    let text = if body.is_empty() { "(nothing)" } else { body };
    let mut out = plain_lines(
        &format!("{head}{text}"),
        width,
        style,
        &[Span::styled("↻ ", style)],
        &indent(2),
    );
    if !expanded && out.len() > FOLDED_LINES {
        let more = out.len() - (FOLDED_LINES - 1);
        out.truncate(FOLDED_LINES - 1);
        out.push(Line::from(Span::styled(
            format!("  … +{more} lines ({})", super::keymap::expand_hint()),
            dim(),
        )));
    }
    out
}

/// A note longer than what shows folded.
pub(crate) fn is_long(text: &str) -> bool {
    parse(text).is_some_and(|(_, body)| body.lines().count() > 1 || body.len() > 120)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_reads_as_in_the_config_and_the_tags_are_gone() {
        let (event, body) =
            parse("<hook-context event=\"UserPromptSubmit\">\nbranch: main\n</hook-context>")
                .expect("a hook note");
        assert_eq!(event, "user_prompt_submit");
        assert_eq!(body, "branch: main");
        assert!(parse("<hook-context broken").is_none());
        assert!(parse("plain text").is_none());
    }
}

#[cfg(test)]
mod view_tests {
    use crate::tests::*;
    use pith_protocol::event::{Event, OutputEvent};
    use pith_protocol::message::{PartKind, Role};

    /// A prompt, and what a `user_prompt_submit` hook added to it.
    fn prompt_with_hook_context(lines: usize) -> Vec<pith_protocol::message::Message> {
        let body: Vec<String> = (1..=lines)
            .map(|i| format!("note {i} from the hook"))
            .collect();
        let mut m = msg("M1", Role::User);
        m.parts.push(text("M1", "M1-p", "what changed?"));
        m.parts.push(part(
            "M1",
            "M1-hook",
            PartKind::Text {
                text: format!(
                    "<hook-context event=\"UserPromptSubmit\">\n{}\n</hook-context>",
                    body.join("\n")
                ),
                synthetic: true,
            },
        ));
        vec![m]
    }

    #[test]
    fn what_a_hook_added_is_shown_folded_and_opens_with_ctrl_o() {
        let (mut app, _rx) = app_with(Vec::new());
        for m in prompt_with_hook_context(6) {
            ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
        }
        let folded = render(&mut app, 80, 24);
        assert!(!folded.contains("<hook-context"), "{folded}");
        assert!(
            folded.contains("hook user_prompt_submit added: note 1 from the hook"),
            "{folded}"
        );
        assert!(!folded.contains("note 6 from the hook"), "{folded}");
        assert!(folded.contains("+4 lines"), "{folded}");
        insta::assert_snapshot!("hook_context_folded", folded);

        ctrl(&mut app, 'o');
        let open = render(&mut app, 80, 24);
        assert!(open.contains("note 6 from the hook"), "{open}");
        insta::assert_snapshot!("hook_context_open", open);
    }

    #[test]
    fn a_short_hook_note_shows_whole() {
        let (mut app, _rx) = app_with(Vec::new());
        for m in prompt_with_hook_context(1) {
            ev(&mut app, Event::Output(OutputEvent::Message { message: m }));
        }
        let screen = render(&mut app, 80, 24);
        assert!(
            screen.contains("↻ hook user_prompt_submit added: note 1 from the hook"),
            "{screen}"
        );
        assert!(!screen.contains("lines ("), "{screen}");
    }
}
