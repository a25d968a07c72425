//! The built-in model catalog (assets/models.toml).
