//! `switchboard migrate openclaw|hermes`: move an OpenClaw or Hermes Agent
//! setup over in one command. The plan comes first — every setting mapped
//! and where to, every one left out and why, secrets redacted — then,
//! unless `--dry-run`, a new configuration (never over an existing one),
//! the persona in the agent's system prompt, memory files and skills
//! copied into its workspace, secrets only with `--secrets`, and `check`.
//! The source is only read (docs/getting-started.md, "Moving over").

mod common;
mod hermes;
mod json5;
mod openclaw;
mod plan;
mod servers;
mod source;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Reads a source home into a plan.
type Reader = fn(&Path) -> Result<plan::Plan, String>;

#[derive(clap::Args, Debug)]
pub(crate) struct MigrateArgs {
    /// Where from: `openclaw` or `hermes`.
    pub from_kind: String,
    /// The source home (default `~/.openclaw` or `~/.hermes`).
    #[arg(long = "from")]
    pub from: Option<PathBuf>,
    /// Print the plan and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Import secrets (tokens, API keys) into a secrets file (mode 0600)
    /// beside the configuration; without it they stay `env:NAME`.
    #[arg(long)]
    pub secrets: bool,
    /// Apply without asking.
    #[arg(long)]
    pub yes: bool,
    /// The configuration to write (it must not exist).
    #[arg(long, default_value = "switchboard.toml")]
    pub out: PathBuf,
}

pub(crate) async fn run(args: MigrateArgs) -> anyhow::Result<ExitCode> {
    let (default_home, reader): (&str, Reader) = match args.from_kind.as_str() {
        "openclaw" => (".openclaw", openclaw::plan),
        "hermes" => (".hermes", hermes::plan),
        other => {
            println!("'{other}' is not a source: use `switchboard migrate openclaw` or `switchboard migrate hermes`.");
            return Ok(ExitCode::from(2));
        }
    };
    let home = match &args.from {
        Some(p) => p.clone(),
        None => PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(default_home),
    };
    let plan = match reader(&home) {
        Ok(p) => p,
        Err(why) => {
            println!("✗ {why} (pass --from PATH if it lives elsewhere)");
            return Ok(ExitCode::FAILURE);
        }
    };
    let label = format!("{} ({})", args.from_kind, home.display());
    print!("{}", plan.text(&label));
    if !args.secrets && plan.secrets.iter().any(|(_, v)| v.is_some()) {
        println!(
            "\nSecrets are not imported without --secrets: set those variables before starting, or run again with --secrets."
        );
    }
    if args.dry_run {
        println!("\n--dry-run: nothing was written.");
        return Ok(ExitCode::SUCCESS);
    }
    if std::fs::symlink_metadata(&args.out).is_ok() {
        println!(
            "\n✗ {} exists: pass --out PATH for a new file (a migration never replaces one).",
            args.out.display()
        );
        return Ok(ExitCode::from(2));
    }
    let dir = args
        .out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !plan.copies.is_empty() && std::fs::symlink_metadata(dir.join("workspace/main")).is_ok() {
        println!(
            "\n✗ {} exists: a migration copies into a new workspace only; pass --out in a new folder.",
            dir.join("workspace/main").display()
        );
        return Ok(ExitCode::from(2));
    }
    if !args.yes && !confirmed(&args.out) {
        println!("Nothing was written.");
        return Ok(ExitCode::FAILURE);
    }
    apply(&plan, &args, &label)?;
    match switchboard_config::Config::load(&args.out) {
        Ok(_) => println!("✓ switchboard check accepts {}", args.out.display()),
        Err(e) => {
            print!("{e}");
            println!(
                "Fix what it names in {} (the source was not changed).",
                args.out.display()
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    println!(
        "\nStart the gateway:\n\n    switchboard run --config {}\n",
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn confirmed(out: &Path) -> bool {
    print!("\nWrite {} and copy the files above? [y/N] ", out.display());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    matches!(line.trim(), "y" | "Y" | "yes")
}

/// Write the configuration (and secrets file), copy the files.
fn apply(plan: &plan::Plan, args: &MigrateArgs, label: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = args
        .out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let stem = args
        .out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "switchboard".into());
    let env_name = format!("{stem}.env");
    let env_file = args.secrets.then_some(env_name.as_str());
    if args.secrets {
        let path = dir.join(&env_name);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        f.write_all(plan.secrets_file().as_bytes())?;
        println!("✓ wrote {} (secrets, mode 0600)", path.display());
    }
    let mut config = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(&args.out)?;
    config.write_all(plan.config(label, env_file).as_bytes())?;
    println!("✓ wrote {}", args.out.display());
    for (from, to) in &plan.copies {
        let target = dir.join(to);
        copy(from, &target)?;
        println!("✓ copied {} → {}", from.display(), target.display());
    }
    Ok(())
}

/// Copy a file or a folder into the new workspace: links are skipped,
/// a source file is opened without following one, and nothing existing
/// is written through (new folders, new files only).
fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::symlink_metadata(from)?;
    if meta.is_dir() {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::create_dir(to)?;
        for e in std::fs::read_dir(from)?.flatten() {
            copy(&e.path(), &to.join(e.file_name()))?;
        }
    } else if meta.is_file() {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut source = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(from)?;
        if !source.metadata()?.is_file() {
            return Ok(());
        }
        let mut target = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(to)?;
        std::io::copy(&mut source, &mut target)?;
    }
    Ok(())
}
