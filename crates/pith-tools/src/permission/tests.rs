use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::testutil::Ws;
use pith_config::PermissionSetting;

mod bash_lines;
mod grants;
mod loop_guards;
mod mcp_tools;
mod paths;
mod protected;
mod tables;
mod webfetch;

fn rules(toml_text: &str) -> BTreeMap<String, PermissionSetting> {
    #[derive(serde::Deserialize)]
    struct P {
        permission: BTreeMap<String, PermissionSetting>,
    }
    toml::from_str::<P>(toml_text).unwrap().permission
}

fn defaults_only() -> Permissions {
    Permissions::new(&BTreeMap::new())
}

fn is_allow(d: &Decision) -> bool {
    matches!(d, Decision::Allow)
}

fn ask(d: Decision) -> PermissionRequest {
    match d {
        Decision::Ask(r) => r,
        other => panic!("expected Ask, got {other:?}"),
    }
}

fn deny(d: Decision) -> String {
    match d {
        Decision::Deny { message } => message,
        other => panic!("expected Deny, got {other:?}"),
    }
}
