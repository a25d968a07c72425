//! An image pasted from the clipboard in the prompt: a `[image N: 312 KB png]` chip that
//! stands for the saved file's `@path` mention and goes whole with one backspace.

use super::{Chip, Composer};

impl Composer {
    /// Attaches an image saved at `path`: a `[image N: 312 KB png]` chip standing for its
    /// `@path` mention (the engine attaches it as it does a typed one), a word of its own.
    pub fn attach_image(&mut self, path: &str, kind: &str, size: &str) {
        let mut n = 1 + self.chips.iter().filter(|c| c.image).count();
        let mut label = format!("[image {n}: {size} {kind}]");
        while self.chips.iter().any(|c| c.label == label) {
            n += 1;
            label = format!("[image {n}: {size} {kind}]");
        }
        let (line, col) = self.cursor_line();
        let after_word = col > 0
            && line
                .chars()
                .nth(col - 1)
                .is_some_and(|c| !c.is_whitespace());
        if after_word {
            self.textarea.insert_char(' ');
        }
        self.textarea.insert_str(format!("{label} "));
        self.chips.push(Chip {
            label,
            text: pith_config::path::mention(path),
            pasted: false,
            image: true,
        });
        self.hist_pos = None;
    }

    /// Backspace right after an image chip removes its whole label (the image is no longer
    /// attached; ctrl+z brings it back). False when the cursor is not after one.
    pub(crate) fn delete_image_chip(&mut self) -> bool {
        let (line, col) = self.cursor_line();
        let before: String = line.chars().take(col).collect();
        let Some(len) = self
            .chips
            .iter()
            .filter(|c| c.image && before.ends_with(c.label.as_str()))
            .map(|c| c.label.chars().count())
            .next()
        else {
            return false;
        };
        for _ in 0..len {
            self.textarea.delete_char();
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use crate::component::Component;

    #[test]
    fn an_image_chip_stands_for_its_mention_and_goes_whole() {
        let keymap = crate::keymap::Keymap::default();
        let mut c = Composer::default();
        c.textarea.insert_str("what is");
        c.attach_image("/data/images/01a.png", "png", "312 KB");
        c.textarea.insert_str("and");
        c.attach_image("/data/images/01b.jpg", "jpg", "2 KB");
        assert_eq!(
            c.text(),
            "what is [image 1: 312 KB png] and [image 2: 2 KB jpg] "
        );
        assert_eq!(
            c.expanded(),
            "what is @/data/images/01a.png and @/data/images/01b.jpg "
        );
        let backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);
        c.on_key(backspace, &keymap);
        assert_eq!(
            c.text(),
            "what is [image 1: 312 KB png] and [image 2: 2 KB jpg]"
        );
        c.on_key(backspace, &keymap);
        assert_eq!(
            c.text(),
            "what is [image 1: 312 KB png] and ",
            "the chip went whole"
        );
        assert_eq!(c.expanded(), "what is @/data/images/01a.png and ");
        let (sent, pasted) = c.take();
        assert_eq!(sent, "what is @/data/images/01a.png and ");
        assert!(
            pasted.is_empty(),
            "an image the user attached is theirs, not pasted text"
        );
        // recalled from the history, the chip still stands for its image
        assert!(c.history_prev());
        assert_eq!(c.expanded(), sent);
    }

    #[test]
    fn a_path_with_a_space_is_quoted() {
        let mut c = Composer::default();
        c.attach_image(
            "/Users/a/Library/Application Support/pith/images/01a.png",
            "png",
            "1 KB",
        );
        assert_eq!(
            c.expanded(),
            "@\"/Users/a/Library/Application Support/pith/images/01a.png\" "
        );
    }
}
