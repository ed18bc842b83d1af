//! rlgraph-rs as one dependency: spaces, components, agents, executors, environments and the
//! profiler, on candle (and on libtorch with the `tch` feature), with a [`prelude`].
//!
//! The guide to all of it is the book, `docs/book` in the repository (its contents:
//! `docs/book/src/SUMMARY.md`; `./scripts/book.sh` builds it).
//!
//! # Quickstart from Rust
//!
//! ```toml
//! [dependencies]
//! rlgraph = { path = "../rlgraph-rs/rlgraph" }
//! serde = { version = "1", features = ["derive"] }
//! serde_json = "1"
//!
//! # Debug builds of the numeric code run about 30x slower than release; optimise it even
//! # in your debug builds:
//! [profile.dev.package."*"]
//! opt-level = 2
//! ```
//!
//! Copy this checkout's `Cargo.lock` into your crate to build with the exact versions its
//! tests ran with (and offline, once cargo has fetched them). The first build on the default
//! features compiles 167 crates: about 6 minutes on two cores and 1.6 GB of `target/`
//! (`distributed`, the distributed roles' gRPC, TLS and tokio stack, and `tch` add 125 crates
//! and about 6 minutes; see the book's "From Rust" page). Later builds take seconds.
//!
//! ```toml
//! # Ape-X and IMPALA across processes (`rlgraph::executors::distributed`), and libtorch:
//! rlgraph = { path = "../rlgraph-rs/rlgraph", features = ["distributed", "tch"] }
//! ```
//!
//! The registries (`register_component`, `register_env`, `register_algorithm`) are
//! process-wide, as Gymnasium's `register` is: register each name once, at the start of
//! `main` (a second registration of a name is refused).
//!
//! ## A component of your own, tested alone, then in a DQN network from JSON
//!
//! A component declares API methods over symbolic operands and graph functions that compute
//! on any [`Backend`](prelude::Backend); [`ComponentTest`](prelude::ComponentTest) builds
//! it alone from its input spaces. [`register_component`](prelude::register_component)
//! gives it a `type` name that JSON specs build, with its settings read as your serde type
//! (a typo key is refused, by key path, when a config loads).
//!
//! ```
//! use rlgraph::prelude::*;
//! use serde_json::json;
//!
//! /// The settings of `scaled-tanh`: `scale * tanh(x)`.
//! #[derive(serde::Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct ScaledTanh {
//!     scale: f64,
//! }
//!
//! fn scaled_tanh<B: Backend>(s: ScaledTanh, _at: &str) -> rlgraph::core::Result<Component<B>> {
//!     Ok(Component::new("scaled-tanh")
//!         .api("call", vec![Param::new("inputs")], |ctx, args| ctx.graph_fn("apply", &[args.get(0)?]))
//!         .graph_fn(
//!             GraphFn::tensors("apply", move |_, xs| Ok(vec![B::affine(&B::tanh(xs[0])?, s.scale, 0.0)?]))
//!                 .infer_same(),
//!         ))
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Alone: tanh(0) = 0 and 2 * tanh(1) = 1.5232.
//! let layer = scaled_tanh::<Candle>(ScaledTanh { scale: 2.0 }, "test")?;
//! let inputs = Space::from(FloatBox::new([2])).with_batch_rank(true);
//! let mut test = ComponentTest::<Candle>::new(layer, [("inputs", inputs.clone())], 0)?;
//! let out = test.call("call", &[inputs.value_from_json(&json!([[0.0, 1.0]]))?])?;
//! let got = out[0].to_json();
//! assert!(got[0][0] == 0.0 && (got[0][1].as_f64().unwrap() - 1.5232).abs() < 1e-4, "{got}");
//!
//! // Registered, it is a layer type that configs use.
//! register_component::<Candle, ScaledTanh>("scaled-tanh", scaled_tanh::<Candle>)?;
//! let config = json!({
//!     "type": "dqn",
//!     "network_spec": [{"type": "dense", "units": 16}, {"type": "scaled-tanh", "scale": 1.0}],
//!     "memory_spec": {"type": "replay", "capacity": 1000},
//! });
//! let env = make("CartPole-v1", 0)?;
//! let mut agent = build_agent::<Candle>(&config, env.state_space(), env.action_space(), 0)?;
//! let state = env.state_space().value_from_json(&json!([0.0, 0.1, 0.0, -0.1]))?;
//! let actions = agent.get_actions(&[state], false, 0.0)?;
//! assert!(env.action_space().contains(&actions[0]));
//!
//! // A typo in its settings is refused when the config loads, by its key path.
//! let mut typo = config.clone();
//! typo["network_spec"][1] = json!({"type": "scaled-tanh", "scael": 1.0});
//! let refused = build_agent::<Candle>(&typo, env.state_space(), env.action_space(), 0).err().unwrap();
//! assert!(refused.to_string().contains("network_spec[1].scael"), "{refused}");
//! # Ok(())
//! # }
//! ```
//!
//! ## An environment of your own: registered, trained on with PPO and evaluation, saved and reloaded
//!
//! An [`Env`](prelude::Env) declares its spaces, resets from a seed and steps; the public
//! helpers keep its episode clock ([`EpisodeClock`](prelude::EpisodeClock)) and read its
//! actions ([`discrete_action`](prelude::discrete_action)). [`check_env`](prelude::check_env)
//! says what breaks the contract, and [`register_env`](prelude::register_env) gives it an
//! id that [`make`](prelude::make), configs and `rlgraph train --env` (from a binary that
//! calls `rlgraph_cli::main` after registering) know. [`drive`](prelude::drive) runs any
//! worker with resume, TensorBoard and `episodes.csv` where asked.
//!
//! ```
//! use rlgraph::prelude::*;
//! use serde_json::json;
//!
//! /// A corridor of 5 cells: action 1 steps right, 0 left; the right end pays 1 and ends the
//! /// episode; 12 steps at most. The observation is where the agent stands, from 0 to 1.
//! struct Corridor {
//!     at: usize,
//!     clock: EpisodeClock,
//!     states: Space,
//!     actions: Space,
//! }
//!
//! impl Corridor {
//!     fn new() -> Self {
//!         Corridor {
//!             at: 0,
//!             clock: EpisodeClock::new("Corridor-v0", Some(12)),
//!             states: FloatBox::bounded([1], 0.0, 1.0).expect("0 <= 1").into(),
//!             actions: IntBox::new(2).expect("2 actions").into(),
//!         }
//!     }
//! }
//!
//! impl Env for Corridor {
//!     fn id(&self) -> &str { "Corridor-v0" }
//!     fn state_space(&self) -> &Space { &self.states }
//!     fn action_space(&self) -> &Space { &self.actions }
//!     fn reset(&mut self, _seed: Option<u64>) -> rlgraph::envs::Result<Value> {
//!         self.at = 0;
//!         self.clock.start();
//!         Ok(observation(&[0.0]))
//!     }
//!     fn step(&mut self, action: &Value) -> rlgraph::envs::Result<Step> {
//!         let right = discrete_action("Corridor-v0", &self.actions, action, 2)? == 1;
//!         self.clock.tick()?;
//!         self.at = if right { self.at + 1 } else { self.at.saturating_sub(1) };
//!         let terminated = self.at == 4;
//!         Ok(Step {
//!             observation: observation(&[self.at as f64 / 4.0]),
//!             reward: if terminated { 1.0 } else { 0.0 },
//!             terminated,
//!             truncated: self.clock.finish(terminated),
//!         })
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! check_env(&mut Corridor::new(), 0, 200)?;
//! register_env("Corridor-v0", |_seed| Ok(Box::new(Corridor::new()) as Box<dyn Env>))?;
//!
//! let config = json!({
//!     "type": "ppo",
//!     "discount": 0.9,
//!     "network_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
//!     "value_function_spec": [{"type": "dense", "units": 16, "activation": "tanh"}],
//!     "update_spec": {"update_interval": 16, "batch_size": 64, "num_iterations": 4, "sample_size": 32},
//!     "optimizer_spec": {"type": "adam", "learning_rate": 0.01},
//! });
//! let copies = |n: u64| -> Result<VectorEnv, Box<dyn std::error::Error>> {
//!     let envs = (0..n).map(|i| make("Corridor-v0", i)).collect::<Result<Vec<_>, _>>()?;
//!     Ok(VectorEnv::new(envs, Stepping::Sequential)?)
//! };
//! let probe = make("Corridor-v0", 0)?;
//! let agent = build_agent::<Candle>(&config, probe.state_space(), probe.action_space(), 0)?;
//! // A greedy round of 2 episodes every 1,000 steps.
//! let mut worker = SingleThreadedWorker::new(agent, copies(4)?, 0).with_evaluation(Evaluation::new(1000, copies(2)?));
//! let length = RunLength { timesteps: 3000, episodes: None, pause_at: None };
//! let run = drive(&mut worker, &DriveOptions::new(length), &mut |_| {})?;
//! // The greedy policy walks straight to the end: a return of 1 in every round's episodes.
//! let last = run.run.evaluations.last().expect("rounds at 1,000, 2,000 and 3,000 steps");
//! assert_eq!(last.mean_return, 1.0, "{:?}", run.run.evaluations);
//!
//! // Saved and reloaded into a new agent, it acts the same.
//! let dir = std::env::temp_dir().join(format!("rlgraph-quickstart-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! worker.save_checkpoint(&dir.join("checkpoint.safetensors"))?;
//! let mut reloaded = build_agent::<Candle>(&config, probe.state_space(), probe.action_space(), 1)?;
//! reloaded.restore_checkpoint(&dir.join("checkpoint.safetensors"))?;
//! let states: Vec<Value> = (0..5).map(|i| observation(&[i as f64 / 4.0])).collect();
//! assert_eq!(reloaded.get_actions(&states, false, 1.0)?, worker.agent_mut().get_actions(&states, false, 1.0)?);
//! // Every variable came back, not only what decides these five actions.
//! assert_eq!(reloaded.get_weights()?, worker.agent_mut().get_weights()?);
//! std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
//!
//! ## An agent composed in Rust
//!
//! [`AgentBuilder`](prelude::AgentBuilder) (`DqnAgent::builder`, `PgAgent::builder`,
//! `SacAgent::builder`, `ImpalaAgent::builder`) takes an agent's parts as values: layers
//! (your own components among them, with no registration), preprocessors, an optimizer, a
//! replay memory ([`PrioritizedReplay`](prelude::PrioritizedReplay), or
//! `ReplayMemory::new(name, &records, capacity)` for uniform replay), an exploration schedule
//! ([`TimeDependent`](prelude::TimeDependent); in JSON, `exploration_spec.epsilon_spec.decay_spec`
//! is the same schedule: a number, `["linear", from, to]`, `["polynomial", from, to, power]`,
//! `["exponential", from, to, decay_rate]`, or RLgraph's object form); RLgraph's JSON gives
//! the rest. The parts go
//! through the same space checks as a config, and a section given both ways, or a part the
//! algorithm has no place for, is refused by name.
//!
//! ```
//! use rlgraph::prelude::*;
//! use serde_json::json;
//!
//! /// A preprocessor of your own: `x * factor`, elementwise, keeping no state.
//! fn scale<B: Backend>(factor: f64) -> Component<B> {
//!     Component::new("scale")
//!         .api("call", vec![Param::new("inputs")], |ctx, args| ctx.graph_fn("apply", &[args.get(0)?]))
//!         .graph_fn(GraphFn::tensors("apply", move |_, xs| Ok(vec![B::affine(xs[0], factor, 0.0)?])).infer_same())
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let env = make("CartPole-v1", 0)?;
//! let (states, actions) = (env.state_space().clone(), env.action_space().clone());
//! let relu = |units| dense::<Candle>(&format!("hidden-{units}"), DenseSpec { activation: Activation::Relu, ..DenseSpec::new(units) });
//! let agent = DqnAgent::<Candle>::builder(json!({
//!         "type": "dqn",
//!         "discount": 0.99,
//!         "update_spec": {"update_interval": 4, "batch_size": 32, "steps_before_update": 200, "sync_interval": 100},
//!     }))
//!     .preprocessors(vec![scale(0.5)])
//!     .network(vec![relu(64), relu(32)])
//!     .optimizer(OptimizerSpec::adam(0.001))
//!     .exploration(TimeDependent::Linear { from: 1.0, to: 0.05 })
//!     .memory(PrioritizedReplay::new("replay", &transition_space(&states, &actions)?, 10_000, 0.6, 0.4)?)
//!     .build(&states, &actions, 0)?;
//!
//! let envs = VectorEnv::new(vec![make("CartPole-v1", 1)?, make("CartPole-v1", 2)?], Stepping::Sequential)?;
//! let mut worker = SingleThreadedWorker::new(agent, envs, 0);
//! let length = RunLength { timesteps: 2000, episodes: None, pause_at: None };
//! let run = drive(&mut worker, &DriveOptions::new(length), &mut |_| {})?;
//! // One update every 4 steps once 200 are stored: (2000 - 200) / 4 = 450, give or take the
//! // two copies' step at the start.
//! assert!((449..=451).contains(&run.run.updates), "{}", run.run.updates);
//!
//! // A part given both ways is refused by the config key it stands for.
//! let twice = DqnAgent::<Candle>::builder(json!({"type": "dqn", "optimizer_spec": {"type": "adam"}}))
//!     .network(vec![relu(8)])
//!     .optimizer(OptimizerSpec::adam(0.001))
//!     .build(&states, &actions, 0);
//! assert!(twice.err().unwrap().to_string().contains("config.optimizer_spec"));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

pub mod prelude;

pub use agents;
pub use backend_candle::Candle;
#[cfg(feature = "tch")]
pub use backend_tch::Tch;
pub use executors;
pub use rlgraph_components as components;
pub use rlgraph_core as core;
pub use rlgraph_envs as envs;
pub use rlgraph_memories as memories;
pub use rlgraph_profiler as profiler;
pub use rlgraph_spaces as spaces;
