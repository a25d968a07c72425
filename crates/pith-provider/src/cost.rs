//! What a step cost, from its reported usage and the model's prices.

use pith_config::ModelConfig;
use pith_protocol::message::Usage;

/// Cache reads cost this fraction of the input price when the catalog gives no cache price.
const CACHE_READ_FACTOR: f64 = 0.1;
/// Cache writes cost this multiple of the input price when the catalog gives no cache price.
const CACHE_WRITE_FACTOR: f64 = 1.25;

/// The cost of `usage` in USD. Prices are per million tokens. `usage.input` is uncached input
/// only; cache reads are billed at `cost_cache_read` (else 10% of the input price) and cache
/// writes at `cost_cache_write` (else 125%). Reasoning tokens are part of `output` as providers
/// report them, so they are not billed again.
pub fn cost(usage: &Usage, model: &ModelConfig) -> f64 {
    let read = model
        .cost_cache_read
        .unwrap_or(model.cost_input * CACHE_READ_FACTOR);
    let write = model
        .cost_cache_write
        .unwrap_or(model.cost_input * CACHE_WRITE_FACTOR);
    let total = usage.input as f64 * model.cost_input
        + usage.output as f64 * model.cost_output
        + usage.cache_read as f64 * read
        + usage.cache_write as f64 * write;
    total / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> ModelConfig {
        ModelConfig {
            cost_input: 3.0,
            cost_output: 15.0,
            ..ModelConfig::default()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn input_and_output_at_list_prices() {
        let u = Usage {
            input: 1_000_000,
            output: 100_000,
            ..Usage::default()
        };
        assert!(close(cost(&u, &model()), 3.0 + 1.5));
    }

    #[test]
    fn cache_prices_default_to_fractions_of_input() {
        let u = Usage {
            cache_read: 1_000_000,
            cache_write: 1_000_000,
            ..Usage::default()
        };
        // 10% of 3.0 for reads, 125% of 3.0 for writes.
        assert!(close(cost(&u, &model()), 0.3 + 3.75));
    }

    #[test]
    fn catalog_cache_prices_win() {
        let m = ModelConfig {
            cost_cache_read: Some(0.5),
            cost_cache_write: Some(6.0),
            ..model()
        };
        let u = Usage {
            input: 2_000,
            output: 1_000,
            cache_read: 10_000,
            cache_write: 4_000,
            reasoning: 500,
        };
        let want = (2_000.0 * 3.0 + 1_000.0 * 15.0 + 10_000.0 * 0.5 + 4_000.0 * 6.0) / 1e6;
        assert!(close(cost(&u, &m), want));
    }

    #[test]
    fn free_model_and_zero_usage_cost_nothing() {
        let u = Usage {
            input: 5,
            output: 5,
            cache_read: 5,
            cache_write: 5,
            reasoning: 5,
        };
        assert_eq!(cost(&u, &ModelConfig::default()), 0.0);
        assert_eq!(cost(&Usage::default(), &model()), 0.0);
    }
}
