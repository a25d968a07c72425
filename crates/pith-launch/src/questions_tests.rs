//! The launch's questions over a real workspace, data directory and configuration file.

use std::path::Path;

use super::*;
use crate::options::FrontEnd;

struct Dirs {
    workspace: tempfile::TempDir,
    data: tempfile::TempDir,
    /// Holds the explicit configuration file (outside the workspace: trusted).
    elsewhere: tempfile::TempDir,
}

fn dirs(workspace_toml: &str) -> Dirs {
    let d = Dirs {
        workspace: tempfile::tempdir().unwrap(),
        data: tempfile::tempdir().unwrap(),
        elsewhere: tempfile::tempdir().unwrap(),
    };
    if !workspace_toml.is_empty() {
        std::fs::write(d.workspace.path().join("pith.toml"), workspace_toml).unwrap();
    }
    d
}

fn setup(d: &Dirs, config: Option<&str>, trust: bool) -> Setup {
    let file = config.map(|text| {
        let f = d.elsewhere.path().join("config.toml");
        std::fs::write(&f, text).unwrap();
        f
    });
    Setup::in_dirs(
        d.workspace.path().to_path_buf(),
        d.data.path().to_path_buf(),
        file,
        trust,
    )
    .unwrap()
}

const NEEDS_TRUST: &str = "[permission]\nbash = \"allow\"\n";

#[test]
fn a_workspace_setting_that_needs_trust_is_asked_about_once() {
    let d = dirs(NEEDS_TRUST);
    let mut s = setup(&d, None, false);
    let q = s.trust_question().expect("asked");
    assert_eq!(q.ignored, ["permission.bash"]);
    assert_eq!(q.workspace, d.workspace.path().canonicalize().unwrap());
    s.decide_trust(false).unwrap();
    assert_eq!(s.trust_question(), None);
    // the answer is kept: the next start does not ask
    assert_eq!(setup(&d, None, false).trust_question(), None);
}

#[test]
fn trust_given_on_the_command_line_or_nothing_to_trust_asks_nothing() {
    let d = dirs(NEEDS_TRUST);
    assert_eq!(setup(&d, None, true).trust_question(), None);
    let plain = dirs("");
    assert_eq!(setup(&plain, None, false).trust_question(), None);
}

#[tokio::test]
async fn a_model_named_by_the_flag_the_config_or_the_session_is_not_decided() {
    let d = dirs("");
    let configured = setup(&d, Some("model = \"openai/gpt-4.1\"\n"), false);
    assert_eq!(
        configured.first_model(None, false, false).await,
        FirstModel::Named
    );
    let bare = setup(&d, Some(""), false);
    assert_eq!(
        bare.first_model(Some("openai/gpt-4.1"), false, false).await,
        FirstModel::Named
    );
    assert_eq!(bare.first_model(None, true, false).await, FirstModel::Named);
}

#[test]
fn the_hosted_providers_are_the_first_run_ones_in_order() {
    let d = dirs("");
    let s = setup(&d, Some(""), false);
    let names: Vec<String> = s
        .hosted_providers()
        .into_iter()
        .map(|k| k.provider)
        .collect();
    let want: Vec<&str> = KNOWN_PROVIDERS
        .iter()
        .filter(|k| k.first_run_model.is_some())
        .map(|k| k.name)
        .collect();
    assert_eq!(names, want);
    assert!(!names.is_empty());
}

#[test]
fn login_offers_every_provider_with_a_key_variable_the_built_in_ones_first() {
    let d = dirs("");
    let s = setup(
        &d,
        Some(
            "[provider.aaa]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"AAA_KEY\"\n[provider.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
        ),
        false,
    );
    let names: Vec<String> = s.key_providers().into_iter().map(|k| k.provider).collect();
    assert_eq!(names.last().map(String::as_str), Some("aaa"), "{names:?}");
    assert!(
        !names.iter().any(|n| n == "local"),
        "no key variable: {names:?}"
    );
    assert_eq!(names[0], KNOWN_PROVIDERS[0].name, "{names:?}");
}

#[test]
fn a_model_of_a_provider_without_a_key_variable_needs_no_key() {
    let d = dirs("");
    let s = setup(
        &d,
        Some("[provider.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n"),
        false,
    );
    assert_eq!(s.missing_key("local/m"), None);
    // a provider pith does not know asks nothing either
    assert_eq!(s.missing_key("nowhere/m"), None);
    let unset = setup(
        &d,
        Some(
            "[provider.keyed]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"PITH_LAUNCH_TEST_NEVER_SET\"\n",
        ),
        false,
    );
    let need = unset.missing_key("keyed/m").expect("the key is missing");
    assert_eq!(
        (need.provider.as_str(), need.var.as_str()),
        ("keyed", "PITH_LAUNCH_TEST_NEVER_SET")
    );
}

#[test]
fn the_engine_options_carry_this_workspace_and_data_directory() {
    let d = dirs("");
    let s = setup(&d, Some(""), false);
    let opts = s.engine_options(FrontEnd::Tui);
    assert_eq!(opts.workspace, d.workspace.path().canonicalize().unwrap());
    assert_eq!(opts.data_dir, Path::new(d.data.path()));
}

#[test]
fn a_stored_key_for_a_first_run_provider_names_its_model() {
    let (model, notice) = Setup::model_for_key("openai").expect("openai has a first-run model");
    assert_eq!(model, "openai/gpt-4.1");
    assert!(
        notice.starts_with("Stored your openai key; using openai/gpt-4.1."),
        "{notice}"
    );
    assert_eq!(Setup::model_for_key("no-such-provider"), None);
}
