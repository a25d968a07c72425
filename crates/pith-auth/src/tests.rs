use super::*;

fn cred(key: &str, url: &str) -> Credential {
    Credential {
        key: key.into(),
        base_url: url.into(),
    }
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn written_private_and_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut c = Credentials::default();
    c.providers.insert(
        "openai".into(),
        cred("sk-test-0123456789abcdef", "https://api.openai.com/v1"),
    );
    c.write(&data).unwrap();
    #[cfg(unix)]
    {
        assert_eq!(mode(&path(&data)), 0o600);
        assert_eq!(mode(&data), 0o700);
    }
    assert_eq!(Credentials::read(&data).unwrap(), c);
    // no temp file left behind
    let names: Vec<_> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [std::ffi::OsString::from("credentials.json")]);
    assert_eq!(
        Credentials::read(&tmp.path().join("none")).unwrap(),
        Credentials::default()
    );
}

#[cfg(unix)]
#[test]
fn a_file_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    std::fs::write(path(data.path()), "{\"providers\":{}}").unwrap();
    std::fs::set_permissions(path(data.path()), std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = Credentials::read(data.path()).unwrap_err().to_string();
    assert!(
        e.contains(
            "credentials.json: the credentials file can be read by other users; run `chmod 600"
        ),
        "{e}"
    );
    assert!(!e.contains('\n'));
    // a symlink is not followed
    let other = tempfile::tempdir().unwrap();
    std::fs::remove_file(path(data.path())).unwrap();
    std::fs::write(other.path().join("x"), "{}").unwrap();
    std::os::unix::fs::symlink(other.path().join("x"), path(data.path())).unwrap();
    let e = Credentials::read(data.path()).unwrap_err().to_string();
    assert!(e.contains("regular file"), "{e}");
}

#[cfg(unix)]
#[test]
fn bad_json_names_file_and_line_without_the_content() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        path(data.path()),
        "{\n \"providers\": sk-secret-value-123456\n}",
    )
    .unwrap();
    std::fs::set_permissions(path(data.path()), std::fs::Permissions::from_mode(0o600)).unwrap();
    let e = Credentials::read(data.path()).unwrap_err().to_string();
    assert!(e.contains("credentials.json:2:"), "{e}");
    assert!(!e.contains("sk-secret"), "{e}");
}

#[test]
fn a_key_goes_only_to_the_provider_and_address_it_was_stored_for() {
    let mut c = Credentials::default();
    c.providers.insert(
        "openai".into(),
        cred("sk-test-0123456789abcdef", "https://api.openai.com/v1"),
    );
    assert_eq!(
        c.key_for("openai", "https://api.openai.com/v1/").unwrap(),
        Some("sk-test-0123456789abcdef".into())
    );
    assert_eq!(
        c.key_for("openai", "https://attacker.example/v1"),
        Err(Refused::OtherUrl {
            stored: "https://api.openai.com/v1".into()
        })
    );
    assert_eq!(c.key_for("evil", "https://api.openai.com/v1"), Ok(None));
}

#[test]
fn masking_shows_at_most_four_characters() {
    assert_eq!(masked("sk-test-0123456789abcdef"), "…cdef");
    assert_eq!(masked("short-key"), "…");
}
