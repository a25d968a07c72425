//! `pith eval compaction`: a compaction-quality score anyone can reproduce. Each scenario
//! (`assets/eval/compaction/`) is compacted three ways — by pith's own engine, by the plain
//! summary of the original OpenCode design, and not at all — and its probe questions are
//! graded by exact anchors against each context (presence) and against the configured model's
//! answer given only that context (answer). `--session ID` runs the presence check on a stored
//! session instead. Everything it prints goes through `crate::output`.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod ask;
mod baseline;
mod compact;
mod grade;
mod report;
mod scenario;
mod seed;
mod session;
mod transcript;

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use pith_launch::Setup;

use crate::cli::Format;
use ask::Model;
use report::{Report, ScenarioScore, Strategy};
use scenario::Scenario;

/// What `pith eval compaction` was asked to do.
#[derive(Debug)]
pub struct Options {
    /// `--scenarios DIR` (else the shipped ones).
    pub scenarios: Option<PathBuf>,
    pub format: Format,
    /// Skip the answer requests.
    pub presence_only: bool,
    /// `--window`: every scenario compacted at this window.
    pub window: Option<u64>,
    /// `--save-contexts DIR`: where to write each context graded.
    pub save_contexts: Option<PathBuf>,
    /// `--session ID`: the presence check on a stored session.
    pub session: Option<String>,
    /// `--model`.
    pub model: Option<String>,
}

/// Runs the eval and prints its report; the exit code. Ctrl-C stops it with 130, its
/// temporary sessions removed.
pub async fn run(setup: Setup, opts: Options) -> anyhow::Result<i32> {
    tokio::select! {
        r = run_all(setup, opts) => r,
        _ = tokio::signal::ctrl_c() => {
            crate::errln!("pith eval: interrupted");
            Ok(130)
        }
    }
}

async fn run_all(setup: Setup, opts: Options) -> anyhow::Result<i32> {
    if let Some(id) = &opts.session {
        return session::run(&setup, id, opts.format);
    }
    let Some(name) = opts.model.clone().or_else(|| setup.config().model.clone()) else {
        bail!(
            "no model configured: set model = \"provider/model\" in pith.toml or the global config, or pass --model (a local server too: --model llamacpp/NAME or ollama/NAME)"
        );
    };
    let model = Model::build(setup.config(), &name).await?;
    let mut scenarios = match &opts.scenarios {
        Some(dir) => scenario::from_dir(dir)?,
        None => scenario::shipped()?,
    };
    if let Some(w) = opts.window {
        scenarios.iter_mut().for_each(|s| s.window = Some(w));
    }
    let mut report = Report {
        model: name,
        answered: !opts.presence_only,
        ..Report::default()
    };
    let count = scenarios.len();
    for (i, s) in scenarios.iter().enumerate() {
        let progress = |what: &str| {
            crate::errln!("eval {}/{count} {}: {what}", i + 1, s.name);
        };
        let score = score(
            &setup,
            &model,
            s,
            &opts,
            &progress,
            &mut report.answer_errors,
        )
        .await?;
        report.scenarios.push(score);
    }
    match opts.format {
        Format::Json => crate::outln!("{}", report.json()),
        Format::Text => crate::out!("{}", report.table()),
    }
    Ok(0)
}

/// The three contexts of `s`, each graded.
async fn score(
    setup: &Setup,
    model: &Model,
    s: &Scenario,
    opts: &Options,
    progress: &dyn Fn(&str),
    errors: &mut usize,
) -> anyhow::Result<ScenarioScore> {
    let history = {
        let messages = seed::messages(s, "eval", &model.name);
        transcript::of_view(&messages)
    };
    progress("pith's compaction");
    let pith = compact::context(setup, model, s).await?;
    progress("summary-only compaction");
    let summary = baseline::summary(model, &history, s.window()).await?;
    let mut out = ScenarioScore {
        name: s.name.clone(),
        description: s.description.clone(),
        window: s.window(),
        probes: s.probes.len(),
        ..ScenarioScore::default()
    };
    let est = pith_context::tokens::Estimator::for_model(&model.name);
    for (strategy, context) in [
        (Strategy::Pith, pith),
        (Strategy::SummaryOnly, summary),
        (Strategy::Full, history),
    ] {
        out.tokens.insert(strategy, est.text(&context));
        if let Some(dir) = &opts.save_contexts {
            let file = dir.join(format!("{}.{}.txt", s.name, strategy.name()));
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&file, &context))
                .with_context(|| format!("cannot write {}", file.display()))?;
        }
        let present = grade::normalise(&context);
        let presence = out.presence.entry(strategy).or_default();
        for p in &s.probes {
            let ok = grade::passes(p, &present);
            presence.add(p.kind, ok);
            if !ok && strategy == Strategy::Pith {
                out.pith_missing.push(p.question.clone());
            }
        }
        if opts.presence_only {
            continue;
        }
        progress(&format!(
            "asking {} probes ({})",
            s.probes.len(),
            strategy.name()
        ));
        let answers = answers(model, &context, &s.probes, errors).await?;
        out.answer.insert(strategy, answers);
    }
    Ok(out)
}

/// The model's answers to `probes` given only `context`, graded. A server that is down or a key
/// refused ends the run; any other failed request counts as a wrong answer (and in `errors`).
async fn answers(
    model: &Model,
    context: &str,
    probes: &[scenario::Probe],
    errors: &mut usize,
) -> anyhow::Result<grade::Tally> {
    let mut tally = grade::Tally::default();
    for p in probes {
        let ok = match baseline::answer(model, context, &p.question).await {
            Ok(a) => grade::passes(p, &grade::normalise(&a)),
            Err(e) if e.unreachable || e.kind == pith_provider::FaultKind::Auth => {
                return Err(e.into());
            }
            Err(e) => {
                tracing::warn!("eval probe failed: {e}");
                *errors += 1;
                false
            }
        };
        tally.add(p.kind, ok);
    }
    Ok(tally)
}
