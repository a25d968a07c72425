//! An MCP server's question as a form (MCP elicitation): one row per field, typed input (text,
//! a number, a yes/no toggle, a choice, a multi-select), the server's defaults filled in,
//! required fields marked, errors under the field they are about. Tab/Shift+Tab (or ↓/↑) move
//! between fields, Enter submits once every field checks, Esc declines, Ctrl+C cancels (the
//! router's). Forms asked while one is open wait behind it. Drawn by `view/elicit_form.rs`.

use std::collections::VecDeque;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::Rect;
use serde_json::Value;

use pith_protocol::elicitation::{
    Answers, ElicitationAction, ElicitationRequest, Field, FieldKind,
};

use super::component::{Component, Handled};
use super::keymap::Keymap;

/// A one-line text being typed, with its cursor (in characters).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct TextInput {
    pub(crate) text: String,
    pub(crate) cursor: usize,
}

impl TextInput {
    fn new(text: String) -> TextInput {
        let cursor = text.chars().count();
        TextInput { text, cursor }
    }

    fn byte(&self, chars: usize) -> usize {
        self.text
            .char_indices()
            .nth(chars)
            .map_or(self.text.len(), |(i, _)| i)
    }

    /// Text before and after the cursor.
    pub(crate) fn split(&self) -> (&str, &str) {
        self.text.split_at(self.byte(self.cursor))
    }

    fn insert(&mut self, s: &str) {
        let room =
            pith_protocol::elicitation::MAX_TEXT_CHARS.saturating_sub(self.text.chars().count());
        let s: String = s.chars().take(room).collect();
        let at = self.byte(self.cursor);
        self.text.insert_str(at, &s);
        self.cursor += s.chars().count();
    }

    /// A key that edits or moves; true when the text changed.
    fn key(&mut self, code: KeyCode, ctrl: bool) -> bool {
        let len = self.text.chars().count();
        match code {
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                let at = self.byte(self.cursor);
                self.text.remove(at);
                true
            }
            KeyCode::Delete if self.cursor < len => {
                let at = self.byte(self.cursor);
                self.text.remove(at);
                true
            }
            KeyCode::Left => {
                self.cursor = self.cursor.saturating_sub(1);
                false
            }
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(len);
                false
            }
            KeyCode::Home => {
                self.cursor = 0;
                false
            }
            KeyCode::End => {
                self.cursor = len;
                false
            }
            KeyCode::Char('u') if ctrl => {
                *self = TextInput::default();
                true
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                self.insert(c.encode_utf8(&mut [0; 4]));
                true
            }
            _ => false,
        }
    }
}

/// What the user typed or picked in one field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    /// A text or number field: what is typed.
    Text(TextInput),
    /// Yes, no, or not set.
    Toggle(Option<bool>),
    /// The option picked, if any.
    Choice(Option<usize>),
    /// Which options are picked, and the one under the cursor.
    Choices { picked: Vec<bool>, cursor: usize },
}

impl Input {
    fn for_field(field: &Field) -> Input {
        match &field.kind {
            FieldKind::Text { default, .. } => {
                Input::Text(TextInput::new(default.clone().unwrap_or_default()))
            }
            FieldKind::Number { default, .. } => Input::Text(TextInput::new(
                default.map(|n| n.to_string()).unwrap_or_default(),
            )),
            FieldKind::Boolean { default } => Input::Toggle(*default),
            FieldKind::Choice { options, default } => Input::Choice(
                default
                    .as_ref()
                    .and_then(|d| options.iter().position(|o| &o.value == d)),
            ),
            FieldKind::Choices {
                options, default, ..
            } => Input::Choices {
                picked: options.iter().map(|o| default.contains(&o.value)).collect(),
                cursor: 0,
            },
        }
    }

    /// The value it sends, or why it cannot (`Ok(None)`: left empty).
    fn value(&self, field: &Field) -> Result<Option<Value>, String> {
        let value = match (self, &field.kind) {
            (Input::Text(t), _) => return field.parse_input(&t.text),
            (Input::Toggle(b), _) => b.map(Value::Bool),
            (Input::Choice(i), FieldKind::Choice { options, .. }) => i
                .and_then(|i| options.get(i))
                .map(|o| Value::String(o.value.clone())),
            (Input::Choices { picked, .. }, FieldKind::Choices { options, .. }) => {
                let chosen: Vec<Value> = options
                    .iter()
                    .zip(picked)
                    .filter(|(_, p)| **p)
                    .map(|(o, _)| Value::String(o.value.clone()))
                    .collect();
                Some(Value::Array(chosen))
            }
            _ => None,
        };
        match value {
            Some(v) => field.check(&v).map(Some),
            None => Ok(None),
        }
    }
}

/// The form on screen.
#[derive(Debug, Clone, PartialEq)]
pub struct FormState {
    pub(crate) request: ElicitationRequest,
    pub(crate) inputs: Vec<Input>,
    pub(crate) errors: Vec<Option<String>>,
    pub(crate) focus: usize,
    /// Enter was pressed once: errors are shown as the user edits.
    submitted: bool,
}

impl FormState {
    fn new(request: ElicitationRequest) -> FormState {
        let inputs = request.form.fields.iter().map(Input::for_field).collect();
        let errors = vec![None; request.form.fields.len()];
        FormState {
            request,
            inputs,
            errors,
            focus: 0,
            submitted: false,
        }
    }

    fn fields(&self) -> &[Field] {
        &self.request.form.fields
    }

    /// Checks every field; the answers when all pass (errors shown otherwise, focus on the
    /// first).
    fn submit(&mut self) -> Option<Answers> {
        self.submitted = true;
        let mut answers = Answers::new();
        for i in 0..self.inputs.len() {
            self.errors[i] = None;
            let field = &self.request.form.fields[i];
            match self.inputs[i].value(field) {
                Ok(Some(v)) => {
                    answers.insert(field.name.clone(), v);
                }
                Ok(None) if field.required => self.errors[i] = Some("required".into()),
                Ok(None) => {}
                Err(e) => self.errors[i] = Some(e),
            }
        }
        if let Some(first) = self.errors.iter().position(Option::is_some) {
            self.focus = first;
            return None;
        }
        // the same check the engine's side makes before anything is sent
        match self.request.form.check(&answers) {
            Ok(a) => Some(a),
            Err(errors) => {
                for e in errors {
                    if let Some(i) = self.fields().iter().position(|f| f.name == e.field) {
                        self.errors[i] = Some(e.message);
                    }
                }
                None
            }
        }
    }

    /// Re-checks the focused field once errors are being shown.
    fn recheck(&mut self) {
        if !self.submitted {
            return;
        }
        let i = self.focus;
        let field = &self.request.form.fields[i];
        self.errors[i] = match self.inputs[i].value(field) {
            Ok(None) if field.required => Some("required".into()),
            Ok(_) => None,
            Err(e) => Some(e),
        };
    }

    fn move_focus(&mut self, forward: bool) {
        let n = self.inputs.len();
        if n == 0 {
            return;
        }
        self.focus = if forward {
            (self.focus + 1) % n
        } else {
            (self.focus + n - 1) % n
        };
    }

    /// A key for the focused field; true when it changed the field.
    fn edit(&mut self, k: KeyEvent) -> bool {
        let Some(input) = self.inputs.get_mut(self.focus) else {
            return false;
        };
        let n_options = match &self.request.form.fields[self.focus].kind {
            FieldKind::Choice { options, .. } | FieldKind::Choices { options, .. } => options.len(),
            _ => 0,
        };
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match (input, k.code) {
            (Input::Text(t), code) => t.key(code, ctrl),
            (Input::Toggle(b), KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right) => {
                *b = Some(!b.unwrap_or(false));
                true
            }
            // back to "not set": an optional choice or toggle left unanswered
            (Input::Toggle(b), KeyCode::Backspace | KeyCode::Delete) => b.take().is_some(),
            (Input::Choice(i), KeyCode::Backspace | KeyCode::Delete) => i.take().is_some(),
            (Input::Toggle(b), KeyCode::Char('y')) => {
                *b = Some(true);
                true
            }
            (Input::Toggle(b), KeyCode::Char('n')) => {
                *b = Some(false);
                true
            }
            (Input::Choice(i), KeyCode::Right | KeyCode::Char(' ')) if n_options > 0 => {
                *i = Some(i.map_or(0, |i| (i + 1) % n_options));
                true
            }
            (Input::Choice(i), KeyCode::Char(c)) if c != ' ' && !ctrl => {
                let FieldKind::Choice { options, .. } = &self.request.form.fields[self.focus].kind
                else {
                    return false;
                };
                let start = i.map_or(0, |i| i + 1);
                let hit = (0..n_options).map(|k| (start + k) % n_options).find(|&k| {
                    options[k]
                        .title
                        .chars()
                        .next()
                        .is_some_and(|f| f.to_lowercase().eq(c.to_lowercase()))
                });
                if hit.is_some() {
                    *i = hit;
                }
                hit.is_some()
            }
            (Input::Choice(i), KeyCode::Left) if n_options > 0 => {
                *i = Some(i.map_or(n_options - 1, |i| (i + n_options - 1) % n_options));
                true
            }
            (Input::Choices { cursor, .. }, KeyCode::Right) if n_options > 0 => {
                *cursor = (*cursor + 1) % n_options;
                false
            }
            (Input::Choices { cursor, .. }, KeyCode::Left) if n_options > 0 => {
                *cursor = (*cursor + n_options - 1) % n_options;
                false
            }
            (Input::Choices { picked, cursor }, KeyCode::Char(' ')) => {
                if let Some(p) = picked.get_mut(*cursor) {
                    *p = !*p;
                }
                true
            }
            _ => false,
        }
    }
}

/// What the user did with the form on screen.
pub(crate) type FormAnswer = (ElicitationAction, Option<Answers>);

/// The forms asked; the first is on screen.
#[derive(Default)]
pub struct Forms {
    queue: VecDeque<FormState>,
}

impl Forms {
    pub(crate) fn ask(&mut self, request: ElicitationRequest) {
        self.queue.push_back(FormState::new(request));
    }

    #[cfg(test)]
    pub(crate) fn front(&self) -> Option<&FormState> {
        self.queue.front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Pasted text goes into the focused text field of the form on screen (one line, no
    /// controls); false when no text field has the keys.
    pub(crate) fn paste(&mut self, text: &str) -> bool {
        let Some(form) = self.queue.front_mut() else {
            return false;
        };
        if let Some(Input::Text(t)) = form.inputs.get_mut(form.focus) {
            t.insert(&pith_protocol::text::one_line(
                &pith_protocol::text::strip_controls(text),
            ));
            form.recheck();
        }
        true
    }

    /// Every form goes (the turn that asked them ended).
    pub(crate) fn close_all(&mut self) {
        self.queue.clear();
    }

    /// The form on screen was answered: it goes, the next appears.
    pub(crate) fn take_front(&mut self) -> Option<FormState> {
        self.queue.pop_front()
    }
}

impl Component for Forms {
    type Outcome = FormAnswer;
    type Context<'a> = ();

    fn on_key(&mut self, k: KeyEvent, _keymap: &Keymap) -> Handled<FormAnswer> {
        let Some(form) = self.queue.front_mut() else {
            return Handled::Ignored;
        };
        let shift = k.modifiers.contains(KeyModifiers::SHIFT);
        match k.code {
            KeyCode::Esc => Handled::Done((ElicitationAction::Decline, None)),
            KeyCode::Enter => match form.submit() {
                Some(answers) => Handled::Done((ElicitationAction::Accept, Some(answers))),
                None => Handled::Consumed,
            },
            KeyCode::BackTab => {
                form.move_focus(false);
                Handled::Consumed
            }
            KeyCode::Tab if shift => {
                form.move_focus(false);
                Handled::Consumed
            }
            KeyCode::Tab | KeyCode::Down => {
                form.move_focus(true);
                Handled::Consumed
            }
            KeyCode::Up => {
                form.move_focus(false);
                Handled::Consumed
            }
            _ => {
                if form.edit(k) {
                    form.recheck();
                }
                Handled::Consumed
            }
        }
    }

    fn render(&mut self, frame: &mut Frame, area: Rect, _cx: ()) {
        if let Some(form) = self.queue.front() {
            crate::view::elicit_form::draw(frame, area, form);
        }
    }
}
