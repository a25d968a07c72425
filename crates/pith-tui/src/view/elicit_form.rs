//! Draws an MCP server's form (`elicit_form.rs`): who asks and what (the server's text, already
//! cleaned of controls), each field with its title, required mark, description, input and
//! error, and the keys. Longer than the screen, it scrolls to keep the focused field in view.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::popups::{block_titled, centered};
use crate::elicit_form::{FormState, Input};
use crate::theme::theme;
use crate::wrap::wrap;
use pith_protocol::elicitation::{Field, FieldKind};

const MAX_WIDTH: u16 = 100;
const KEYS: &str =
    "tab/↓ next · shift+tab/↑ back · space/←→ choose · enter submit · esc decline · ctrl+c cancel";

fn dim() -> Style {
    Style::default().fg(theme().dim)
}

/// The input as shown (the focused text field with a cursor).
fn input_spans(field: &Field, input: &Input, focused: bool) -> Vec<Span<'static>> {
    let hi = Style::default()
        .fg(theme().accent)
        .add_modifier(Modifier::BOLD);
    match (input, &field.kind) {
        (Input::Text(t), _) => {
            let (before, after) = t.split();
            let mut spans = vec![Span::raw("[ "), Span::raw(before.to_string())];
            if focused {
                spans.push(Span::styled("▏", hi));
            }
            spans.push(Span::raw(after.to_string()));
            spans.push(Span::raw(" ]"));
            spans
        }
        (Input::Toggle(b), _) => {
            let (mark, word) = match b {
                Some(true) => ("[x]", "yes"),
                Some(false) => ("[ ]", "no"),
                None => ("[?]", "not set"),
            };
            vec![Span::raw(format!("{mark} {word}"))]
        }
        (Input::Choice(i), FieldKind::Choice { options, .. }) => {
            let label = i
                .and_then(|i| options.get(i))
                .map_or("(none)".to_string(), |o| o.title.clone());
            let pos = i.map_or(String::new(), |i| format!("  {}/{}", i + 1, options.len()));
            vec![
                Span::raw("◀ "),
                Span::styled(label, if focused { hi } else { Style::default() }),
                Span::raw(" ▶"),
                Span::styled(pos, dim()),
            ]
        }
        (Input::Choices { picked, cursor }, FieldKind::Choices { options, .. }) => {
            let mut spans = Vec::new();
            for (j, (o, p)) in options.iter().zip(picked).enumerate() {
                if j > 0 {
                    spans.push(Span::raw("  "));
                }
                let style = if focused && j == *cursor {
                    hi
                } else {
                    Style::default()
                };
                let mark = if *p { "[x]" } else { "[ ]" };
                spans.push(Span::styled(format!("{mark} {}", o.title), style));
            }
            spans
        }
        _ => vec![],
    }
}

/// The body's lines and the line range of each field.
fn body(form: &FormState, width: usize) -> (Vec<Line<'static>>, Vec<(usize, usize)>) {
    let mut lines = Vec::new();
    for l in form.request.message.lines() {
        lines.extend(wrap(&[Span::raw(l.to_string())], width, &[], &[]));
    }
    lines.push(Line::default());
    let mut ranges = Vec::new();
    for (i, (field, input)) in form
        .request
        .form
        .fields
        .iter()
        .zip(&form.inputs)
        .enumerate()
    {
        let start = lines.len();
        let focused = i == form.focus;
        let marker = if focused { "› " } else { "  " };
        let title_style = if focused {
            Style::default()
                .fg(theme().accent)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        };
        let mut title = vec![
            Span::styled(marker, title_style),
            Span::styled(field.title.clone(), title_style),
        ];
        if field.required {
            title.push(Span::styled(" *", Style::default().fg(theme().warn)));
        }
        title.push(Span::styled(format!("  {}", field.kind_label()), dim()));
        lines.extend(wrap(&title, width, &[], &[Span::raw("    ")]));
        if let Some(d) = &field.description {
            lines.extend(wrap(
                &[Span::styled(d.clone(), dim())],
                width,
                &[Span::raw("    ")],
                &[Span::raw("    ")],
            ));
        }
        let indent = [Span::raw("    ")];
        lines.extend(wrap(
            &input_spans(field, input, focused),
            width,
            &indent,
            &indent,
        ));
        if let Some(e) = &form.errors[i] {
            lines.push(Line::from(vec![
                Span::raw("    "),
                Span::styled(format!("! {e}"), Style::default().fg(theme().err)),
            ]));
        }
        ranges.push((start, lines.len()));
    }
    if form.request.form.fields.is_empty() {
        lines.push(Line::from(Span::styled(
            "  (no fields: enter accepts, esc declines)",
            dim(),
        )));
    }
    (lines, ranges)
}

pub fn draw(frame: &mut Frame, area: Rect, form: &FormState) {
    let w = area.width.min(MAX_WIDTH);
    let inner = w.saturating_sub(4).max(10) as usize;
    let (lines, ranges) = body(form, inner);
    let keys = wrap(&[Span::styled(KEYS, dim())], inner, &[], &[]);
    let want = (lines.len() + keys.len() + 3) as u16;
    let rect = centered(area, w, want.min(area.height));
    let rows = (rect.height as usize).saturating_sub(keys.len() + 3).max(1);
    // keep the focused field in view
    let (start, end) = ranges.get(form.focus).copied().unwrap_or((0, 0));
    let scroll = if end > rows {
        (end - rows).min(start)
    } else {
        0
    };
    let mut shown: Vec<Line<'static>> = lines.into_iter().skip(scroll).take(rows).collect();
    shown.push(Line::default());
    shown.extend(keys);
    frame.render_widget(Clear, rect);
    let title = format!("MCP server {} asks", form.request.server);
    frame.render_widget(Paragraph::new(shown).block(block_titled(&title)), rect);
}
