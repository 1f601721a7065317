//! `switchboard chat`: a conversation with one agent in this terminal,
//! through the built-in `cli` channel. Lines typed while a turn runs are
//! queued, except approval answers and `/stop`, which act at once.

mod broker;
mod channel;
mod stream;
mod text;

use crate::bootstrap;
use crate::channels::ChannelSet;
use crate::cli::chat::broker::CliBroker;
use crate::commands::{self, Command, CommandContext};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_core::{ChatAddress, UserId};
use switchboard_runtime::{Runtime, TurnError, TurnEvent, TurnReply, TurnRequest};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

struct Running {
    task: JoinHandle<Result<TurnReply, TurnError>>,
    cancel: CancellationToken,
}

/// The conversation's state between events.
struct Terminal {
    runtime: Arc<Runtime>,
    agent: String,
    session_key: String,
    address: ChatAddress,
    sender: UserId,
    broker: Arc<CliBroker>,
    /// The `cli` channel, for files and announcements.
    channels: ChannelSet,
    events: mpsc::UnboundedSender<TurnEvent>,
    /// Lines typed while a turn ran, in order.
    queue: VecDeque<String>,
    running: Option<Running>,
    interactive: bool,
    shown: crate::cli::chat::stream::Shown,
}

/// What a typed line asks of the loop.
enum Flow {
    Go,
    Quit,
}

pub(crate) async fn run(config_path: &Path, agent: Option<String>) -> anyhow::Result<ExitCode> {
    let runtime = bootstrap::start(config_path, "chat").await?.runtime;
    let heartbeat =
        crate::cluster::instance::spawn_heartbeat(runtime.store().clone(), "chat", |_| Box::pin(async {}), || ());
    let agent = pick_agent(&runtime, agent)?;
    let login = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "local".into());
    let address = ChatAddress::new("cli", login.clone());
    let session_key = address.session_key(&agent);
    let sender = UserId(format!("cli:{login}"));
    let broker = Arc::new(CliBroker::new(runtime.store().clone(), sender.to_string()));
    let provider = runtime.provider_of(&agent, &session_key).await?;
    eprintln!("switchboard chat: agent '{agent}' via provider '{provider}'. /help lists commands; Ctrl-D quits.");

    // Announcements of background work started here print in this terminal.
    let mut channels = ChannelSet::default();
    channels.insert(Arc::new(crate::cli::chat::channel::CliChannel { login: login.clone() }));
    // Files the agent sends are saved here; `/attach` files are read here.
    runtime.set_file_poster(Arc::new(crate::messages::files::ChannelFiles::new(channels.clone())));
    let delivery = crate::messages::outbox::spawn(
        runtime.store().clone(),
        channels.clone(),
        crate::cluster::Fences::default(),
    );
    let (line_tx, mut lines) = mpsc::channel::<String>(64);
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(tokio::io::stdin()).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            if line_tx.send(line).await.is_err() {
                break;
            }
        }
    });
    let (event_tx, mut events) = mpsc::unbounded_channel::<TurnEvent>();
    let mut t = Terminal {
        runtime: runtime.clone(),
        agent,
        session_key,
        address,
        sender,
        broker,
        channels,
        events: event_tx,
        queue: VecDeque::new(),
        running: None,
        interactive: std::io::stdin().is_terminal(),
        shown: crate::cli::chat::stream::Shown::default(),
    };
    let mut stdin_open = true;
    t.prompt(true);
    loop {
        t.work_through_queue().await;
        if t.running.is_none() && !stdin_open {
            break;
        }
        tokio::select! {
            line = lines.recv(), if stdin_open => match line {
                None => {
                    stdin_open = false;
                    t.broker.close();
                }
                Some(line) => {
                    if let Flow::Quit = t.typed(line.trim().to_string()).await {
                        break;
                    }
                }
            },
            Some(event) = events.recv() => t.show(event),
            result = async { (&mut t.running.as_mut().expect("guarded").task).await }, if t.running.is_some() => {
                t.running = None;
                t.finished(result);
            }
        }
    }
    delivery.abort();
    heartbeat.abort();
    if let Err(e) = runtime.store().unregister_instance().await {
        tracing::warn!(error = %e, "cannot unregister this process");
    }
    Ok(ExitCode::SUCCESS)
}

impl Terminal {
    /// `you> `, on a terminal, when nothing waits in the queue (`ready`).
    fn prompt(&self, ready: bool) {
        if self.interactive && ready {
            use std::io::Write;
            print!("you> ");
            let _ = std::io::stdout().flush();
        }
    }

    /// Work through the queue in order while no turn runs: commands answer
    /// at once, a message (or `/attach`) starts a turn.
    async fn work_through_queue(&mut self) {
        while self.running.is_none() {
            let Some(line) = self.queue.pop_front() else { break };
            if let Some(attached) = crate::messages::files::terminal::attach(&line) {
                match attached {
                    Ok((file, caption)) => {
                        let message = (&self.address, &self.sender, file, caption);
                        let prepared = attach_message(&self.runtime, &self.channels, &self.agent, message).await;
                        self.start(prepared);
                    }
                    Err(e) => {
                        println!("{e}");
                        self.prompt(self.queue.is_empty());
                    }
                }
                continue;
            }
            match commands::parse(&line) {
                Some(cmd) => {
                    let answer = self.command(cmd).await;
                    println!("{}", crate::cli::chat::text::clean(&answer));
                    self.prompt(self.queue.is_empty());
                }
                None => self.start(crate::messages::files::inbound::Prepared::text(line)),
            }
        }
    }

    fn start(&mut self, message: crate::messages::files::inbound::Prepared) {
        let at = (self.agent.as_str(), self.session_key.as_str(), &self.address);
        self.running = Some(start_turn(&self.runtime, at, message, &self.broker, &self.events));
    }

    /// A command's answer (the terminal is the person's own: a direct chat).
    async fn command(&self, cmd: Command) -> String {
        let ctx = CommandContext {
            runtime: &self.runtime,
            agent: &self.agent,
            session_key: &self.session_key,
            address: &self.address,
            sender: &self.sender,
            sent_at: self.runtime.store().now_ms(),
            route: None,
        };
        match cmd {
            Command::Console => crate::commands::console_link::SignIn::answer(&self.runtime, &self.sender, true).await,
            cmd => commands::apply(&cmd, &ctx).await,
        }
    }

    /// A line typed at any time: approval answers and `/stop` act at once,
    /// the rest waits its turn.
    async fn typed(&mut self, line: String) -> Flow {
        if line.is_empty() {
            return Flow::Go;
        }
        let command = commands::parse(&line);
        if self.broker.is_waiting() && command != Some(Command::Stop) {
            println!("{}", self.broker.answer(&line));
            return Flow::Go;
        }
        match command {
            Some(Command::Stop) => self.stop().await,
            Some(Command::Unknown(name)) if name == "quit" || name == "exit" => {
                if let Some(r) = &self.running {
                    r.cancel.cancel();
                }
                return Flow::Quit;
            }
            Some(Command::Decide { .. }) => println!("{}", self.broker.answer(&line)),
            _ => self.queue.push_back(line),
        }
        Flow::Go
    }

    /// `/stop`: the running turn, what waits, and this session's children.
    async fn stop(&mut self) {
        if let Some(r) = &self.running {
            r.cancel.cancel();
            self.queue.clear();
        }
        let children = commands::stop_session_children(&self.runtime, &self.session_key, &self.sender, true).await;
        match (self.running.is_some(), children) {
            (false, 0) => println!("Nothing is running."),
            (true, 0) => println!("Stopping the current turn."),
            (_, n) => println!("Stopping the current turn and {n} child session(s)."),
        }
    }

    /// What the running turn is doing.
    fn show(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::ToolStarted { name, summary } => {
                self.shown.end_line();
                println!("  [tool] {name} {}", crate::cli::chat::text::clean(&summary));
            }
            TurnEvent::ToolFinished { name, success } => {
                println!("  [tool] {name}: {}", if success { "ok" } else { "failed" });
            }
            TurnEvent::Text(t) => self.shown.text(&self.agent, &t),
            TurnEvent::TextReset => self.shown.reset(),
        }
    }

    /// How the turn ended.
    fn finished(&mut self, result: Result<Result<TurnReply, TurnError>, tokio::task::JoinError>) {
        let agent = &self.agent;
        match result {
            Ok(Ok(reply)) => self.shown.finish(agent, &reply.text),
            Ok(Err(TurnError::Cancelled)) => {
                self.shown.end_line();
                self.shown.reset();
                println!("{agent}> (stopped)");
            }
            Ok(Err(e)) => println!("error: {e}"),
            Err(e) => println!("error: the turn crashed: {e}"),
        }
        self.prompt(self.queue.is_empty());
    }
}

/// The message `/attach` stands for: the caption and the file, fetched,
/// saved in the workspace and described (as a chat's files are).
async fn attach_message(
    runtime: &Runtime,
    terminal: &ChannelSet,
    agent: &str,
    (address, sender, file, caption): (&ChatAddress, &UserId, switchboard_core::Attachment, String),
) -> crate::messages::files::inbound::Prepared {
    let message = switchboard_core::Inbound {
        mentioned: true,
        direct: true,
        attachments: vec![file],
        ..switchboard_core::Inbound::new(address.clone(), sender.clone(), caption)
    };
    let key = uuid::Uuid::new_v4().simple().to_string();
    crate::messages::files::inbound::prepare(runtime, terminal, agent, &message, &key).await
}

fn start_turn(
    runtime: &Arc<Runtime>,
    (agent, session_key, address): (&str, &str, &ChatAddress),
    message: crate::messages::files::inbound::Prepared,
    broker: &Arc<CliBroker>,
    events: &mpsc::UnboundedSender<TurnEvent>,
) -> Running {
    let cancel = CancellationToken::new();
    let request = TurnRequest {
        agent: agent.to_string(),
        session_key: session_key.to_string(),
        origin: Some(address.clone()),
        sender: Some(format!("cli:{}", address.chat)),
        text: message.text,
        earlier: Vec::new(),
        broker: broker.clone(),
        cancel: cancel.clone(),
        events: Some(events.clone()),
        turn: None,
        images: message.images,
        joins: None,
    };
    let runtime = runtime.clone();
    Running {
        task: tokio::spawn(async move { runtime.run_turn(request).await }),
        cancel,
    }
}

fn pick_agent(runtime: &Runtime, wanted: Option<String>) -> anyhow::Result<String> {
    let config = &runtime.config();
    let enabled = config.enabled_agents();
    match wanted {
        Some(a) if enabled.contains(&a.as_str()) => Ok(a),
        Some(a) => anyhow::bail!(
            "unknown or disabled agent '{a}'; available agents: {} (see [agents.*] in the configuration)",
            enabled.join(", ")
        ),
        None => {
            // Prefer an agent that lists the cli channel, then `main`, then the first.
            let by_channel = config
                .agents
                .iter()
                .find(|(_, c)| c.enabled && c.channels.iter().any(|ch| ch == "cli"))
                .map(|(n, _)| n.clone());
            Ok(by_channel
                .or_else(|| enabled.contains(&"main").then(|| "main".to_string()))
                .or_else(|| enabled.first().map(std::string::ToString::to_string))
                .expect("validated configs have an enabled agent"))
        }
    }
}
