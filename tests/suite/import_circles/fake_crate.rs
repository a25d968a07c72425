//! The checker itself, on a small crate written to a temp dir: it must find a circle that is
//! there (through `use` trees, `as` renames, `super::super` and inline paths, also after a test
//! module), and must not see one made only of comments, strings, a `'"'` character literal or an
//! inline test module's `use super::*`.

use std::path::Path;

use super::{circles, violations};

const FILES: &[(&str, &str)] = &[
    (
        "lib.rs",
        "mod a;\nmod b;\nmod c;\nmod d;\nmod view;\npub use a::A;\n",
    ),
    (
        "a.rs",
        r##"//! use crate::d::D; (a doc comment is no edge)
use crate::b::B;
/* use crate::d::D; /* nested */ use crate::d::D; */
const QUOTE: char = '"';
const S: &str = "crate::d::D";
const R: &str = r#"super::d::D "# ;
pub struct A<'a>(&'a B);
#[cfg(test)]
mod tests {
    use super::*;
    use crate::d::{self, D};
    fn t() { let _ = { crate::d::D }; }
}
pub fn after_the_tests(_: crate::view::status::S) {}
"##,
    ),
    (
        "b.rs",
        "use super::c::{self as sea, C as Sea};\npub struct B;\n",
    ),
    (
        "c.rs",
        "pub struct C;\npub fn g() -> Option<crate::a::A<'static>> { None }\n",
    ),
    ("d.rs", "use crate::a::A;\npub struct D;\n"),
    ("view/mod.rs", "pub mod status;\n"),
    (
        "view/status.rs",
        "use super::super::c::C;\npub struct S(C);\n",
    ),
];

fn write_fake(root: &Path) {
    for (path, text) in FILES {
        let path = root.join("crates/fake/src").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn the_checker_finds_the_circle_of_a_fake_crate_and_nothing_from_comments_strings_or_tests() {
    let dir = tempfile::tempdir().unwrap();
    write_fake(dir.path());
    let (found, read) = circles(dir.path(), 2);
    assert_eq!(read, 7);
    let lines: Vec<String> = found.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        lines,
        ["fake: circle of 4: a.rs, b.rs, c.rs, view/status.rs"]
    );
}

#[test]
fn the_checker_reports_a_circle_over_the_limit_and_an_entry_larger_than_needed() {
    let dir = tempfile::tempdir().unwrap();
    write_fake(dir.path());
    assert_eq!(
        violations(dir.path(), 3, &[]),
        ["fake: circle of 4: a.rs, b.rs, c.rs, view/status.rs"]
    );
    assert!(violations(dir.path(), 3, &[("fake", 4)]).is_empty());
    let stale = violations(dir.path(), 3, &[("fake", 6)]);
    assert_eq!(stale.len(), 1);
    assert!(
        stale[0].contains("fake: the largest circle has 4 files now"),
        "{stale:?}"
    );
}
