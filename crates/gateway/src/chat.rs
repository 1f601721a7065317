//! `switchboard chat`: a conversation with one agent in this terminal,
//! through the built-in `cli` channel. Lines typed while a turn runs are
//! queued, except approval answers and `/stop`, which act at once.

use crate::bootstrap;
use crate::cli_broker::CliBroker;
use crate::commands::{self, Command, CommandContext};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_core::ChatAddress;
use switchboard_runtime::{Runtime, TurnError, TurnEvent, TurnReply, TurnRequest};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

struct Running {
    task: JoinHandle<Result<TurnReply, TurnError>>,
    cancel: CancellationToken,
}

pub(crate) async fn run(config_path: &Path, agent: Option<String>) -> anyhow::Result<ExitCode> {
    let runtime = bootstrap::start(config_path, "chat").await?.runtime;
    let heartbeat = crate::instance::spawn_heartbeat(runtime.store().clone(), "chat", |_| Box::pin(async {}), || ());
    let agent = pick_agent(&runtime, agent)?;
    let login = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "local".into());
    let address = ChatAddress::new("cli", login.clone());
    let session_key = address.session_key(&agent);
    let sender = switchboard_core::UserId(format!("cli:{login}"));
    let broker = Arc::new(CliBroker::new(runtime.store().clone(), sender.to_string()));
    let interactive = std::io::stdin().is_terminal();
    let provider = runtime.provider_of(&agent, &session_key).await?;
    eprintln!("switchboard chat: agent '{agent}' via provider '{provider}'. /help lists commands; Ctrl-D quits.");

    // Announcements of background work started here print in this terminal.
    let mut terminal = crate::channels::ChannelSet::default();
    terminal.insert(Arc::new(crate::cli_channel::CliChannel { login: login.clone() }));
    // Files the agent sends are saved here; `/attach` files are read here.
    runtime.set_file_poster(Arc::new(crate::files::ChannelFiles::new(terminal.clone())));
    let delivery = crate::outbox::spawn(
        runtime.store().clone(),
        terminal.clone(),
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
    let mut queue: VecDeque<String> = VecDeque::new();
    let mut running: Option<Running> = None;
    let mut stdin_open = true;
    let prompt = |interactive: bool| {
        if interactive {
            use std::io::Write;
            print!("you> ");
            let _ = std::io::stdout().flush();
        }
    };
    prompt(interactive);
    let mut shown = crate::chat_stream::Shown::default();
    loop {
        // Work through the queue in order: commands answer at once, a
        // message starts a turn and waits for it.
        while running.is_none() {
            let Some(line) = queue.pop_front() else { break };
            if let Some(attached) = crate::files::terminal::attach(&line) {
                match attached {
                    Ok((file, caption)) => {
                        let message = (&address, &sender, file, caption);
                        let prepared = attach_message(&runtime, &terminal, &agent, message).await;
                        running = Some(start_turn(
                            &runtime,
                            (&agent, &session_key, &address),
                            prepared,
                            &broker,
                            &event_tx,
                        ));
                    }
                    Err(e) => {
                        println!("{e}");
                        prompt(interactive && queue.is_empty());
                    }
                }
                continue;
            }
            match commands::parse(&line) {
                Some(cmd) => {
                    let ctx = CommandContext {
                        runtime: &runtime,
                        agent: &agent,
                        session_key: &session_key,
                        address: &address,
                        sender: &sender,
                        sent_at: runtime.store().now_ms(),
                    };
                    let answer = match cmd {
                        // The terminal is the person's own: a direct chat.
                        Command::Console => {
                            crate::commands::console_link::SignIn::answer(&runtime, &sender, true).await
                        }
                        cmd => commands::apply(&cmd, &ctx).await,
                    };
                    println!("{}", crate::terminal_text::clean(&answer));
                    prompt(interactive && queue.is_empty());
                }
                None => {
                    running = Some(start_turn(
                        &runtime,
                        (&agent, &session_key, &address),
                        crate::files::inbound::Prepared::text(line),
                        &broker,
                        &event_tx,
                    ));
                }
            }
        }
        if running.is_none() && !stdin_open {
            break;
        }
        tokio::select! {
            line = lines.recv(), if stdin_open => match line {
                None => {
                    stdin_open = false;
                    broker.close();
                }
                Some(line) => {
                    let line = line.trim().to_string();
                    if line.is_empty() {
                        continue;
                    }
                    if broker.is_waiting() && !line.starts_with("/stop") {
                        println!("{}", broker.answer(&line));
                        continue;
                    }
                    match commands::parse(&line) {
                        Some(Command::Stop) => {
                            if let Some(r) = &running {
                                r.cancel.cancel();
                                queue.clear();
                            }
                            let children = commands::stop_session_children(&runtime, &session_key, &sender, true).await;
                            match (running.is_some(), children) {
                                (false, 0) => println!("Nothing is running."),
                                (true, 0) => println!("Stopping the current turn."),
                                (_, n) => println!("Stopping the current turn and {n} child session(s)."),
                            }
                        }
                        Some(Command::Unknown(name)) if name == "quit" || name == "exit" => {
                            if let Some(r) = &running {
                                r.cancel.cancel();
                            }
                            break;
                        }
                        Some(Command::Decide { .. }) => println!("{}", broker.answer(&line)),
                        _ => queue.push_back(line),
                    }
                }
            },
            Some(event) = events.recv() => match event {
                TurnEvent::ToolStarted { name, summary } => {
                    shown.end_line();
                    println!("  [tool] {name} {}", crate::terminal_text::clean(&summary));
                }
                TurnEvent::ToolFinished { name, success } => {
                    println!("  [tool] {name}: {}", if success { "ok" } else { "failed" });
                }
                TurnEvent::Text(t) => shown.text(&agent, &t),
                TurnEvent::TextReset => shown.reset(),
            },
            result = async { (&mut running.as_mut().expect("guarded").task).await }, if running.is_some() => {
                running = None;
                match result {
                    Ok(Ok(reply)) => shown.finish(&agent, &reply.text),
                    Ok(Err(TurnError::Cancelled)) => {
                        shown.end_line();
                        shown.reset();
                        println!("{agent}> (stopped)");
                    }
                    Ok(Err(e)) => println!("error: {e}"),
                    Err(e) => println!("error: the turn crashed: {e}"),
                }
                prompt(interactive && queue.is_empty());
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

/// The message `/attach` stands for: the caption and the file, fetched,
/// saved in the workspace and described (as a chat's files are).
async fn attach_message(
    runtime: &Runtime,
    terminal: &crate::channels::ChannelSet,
    agent: &str,
    (address, sender, file, caption): (
        &ChatAddress,
        &switchboard_core::UserId,
        switchboard_core::Attachment,
        String,
    ),
) -> crate::files::inbound::Prepared {
    let message = switchboard_core::Inbound {
        address: address.clone(),
        sender: sender.clone(),
        sender_name: sender.to_string(),
        text: caption,
        message_id: None,
        event_id: None,
        mentioned: true,
        direct: true,
        reply_to: None,
        attachments: vec![file],
        action: switchboard_core::Action::Text,
    };
    let key = uuid::Uuid::new_v4().simple().to_string();
    crate::files::inbound::prepare(runtime, terminal, agent, &message, &key).await
}

fn start_turn(
    runtime: &Arc<Runtime>,
    (agent, session_key, address): (&str, &str, &ChatAddress),
    message: crate::files::inbound::Prepared,
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
        broker: broker.clone(),
        cancel: cancel.clone(),
        events: Some(events.clone()),
        turn: None,
        images: message.images,
    };
    let runtime = runtime.clone();
    Running {
        task: tokio::spawn(async move { runtime.run_turn(request).await }),
        cancel,
    }
}

fn pick_agent(runtime: &Runtime, wanted: Option<String>) -> anyhow::Result<String> {
    let config = runtime.config();
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
