//! The roles spread over two threads: an actor thread (environment, actor, adder) and a
//! learner thread (replay or queue, learner) that pass records one way and weight snapshots
//! the other over channels. With the single-process schedule and seeds, DQN and IMPALA
//! reach their learning thresholds, with exactly the episode returns of the composed agent.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use agents::{
    apex_priorities, dqn_actor, dqn_replay, impala_actor, stack, transitions_batch, Acted, Actor, Agent, DqnAgent,
    DqnConfig, DqnLearner, GraphActor, ImpalaAgent, ImpalaConfig, ImpalaLearner, Learner, NStepBuffer, Replay,
    RolloutAdder, Transition, UpdateSpec, WeightSnapshot,
};
use backend_candle::Candle;
use executors::SingleThreadedWorker;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rlgraph_core::spaces::{Array, Value};
use rlgraph_core::Result;
use rlgraph_envs::{make, Stepping, VectorEnv};

/// What the actor thread sends.
enum ToLearner {
    Records(Value),
    /// An update is due at this time percentage; the learner answers with a snapshot, or
    /// `None` when it holds too little to learn from.
    Update(f64),
}

/// Where the learner thread keeps records until it learns from them.
trait Feed: Send + 'static {
    fn put(&mut self, records: Value) -> Result<()>;
    /// The next batch and, for prioritized replay, its slots.
    fn batch(&mut self) -> Result<Option<(Value, Option<Vec<usize>>)>>;
    fn feedback(&mut self, indices: &[usize], priorities: &[f64]) -> Result<()>;
}

/// DQN's feed: a replay memory, sampled with the composed agent's sampling seed.
struct ReplayFeed {
    replay: Box<dyn Replay>,
    rng: ChaCha8Rng,
    batch_size: usize,
}

impl Feed for ReplayFeed {
    fn put(&mut self, mut records: Value) -> Result<()> {
        let priorities = match &mut records {
            Value::Dict(d) => match d.remove("priorities") {
                Some(Value::Float64(p)) => Some(p.data().to_vec()),
                _ => None,
            },
            _ => None,
        };
        self.replay.insert(&records, priorities.as_deref())
    }
    fn batch(&mut self) -> Result<Option<(Value, Option<Vec<usize>>)>> {
        if self.replay.size() < self.batch_size {
            return Ok(None);
        }
        let s = self.replay.sample(self.batch_size, &mut self.rng)?;
        Ok(Some((s.batch()?, s.indices)))
    }
    fn feedback(&mut self, indices: &[usize], priorities: &[f64]) -> Result<()> {
        self.replay.update_priorities(indices, priorities)
    }
}

/// IMPALA's feed: a FIFO queue of rollouts that drops its oldest when full.
struct QueueFeed {
    queue: VecDeque<Value>,
    capacity: usize,
    batch_size: usize,
}

impl Feed for QueueFeed {
    fn put(&mut self, records: Value) -> Result<()> {
        if self.queue.len() == self.capacity {
            self.queue.pop_front();
        }
        self.queue.push_back(records);
        Ok(())
    }
    fn batch(&mut self) -> Result<Option<(Value, Option<Vec<usize>>)>> {
        if self.queue.len() < self.batch_size {
            return Ok(None);
        }
        let rollouts: Vec<Value> = self.queue.drain(..self.batch_size).collect();
        Ok(Some((stack(&rollouts)?, None)))
    }
    fn feedback(&mut self, _: &[usize], _: &[f64]) -> Result<()> {
        Ok(())
    }
}

/// The actor thread's ends of the channels to the learner thread.
struct LearnerLink {
    to: Sender<ToLearner>,
    from: Receiver<Option<WeightSnapshot>>,
    handle: JoinHandle<u64>,
}

impl LearnerLink {
    /// Hangs up and waits for the learner thread; its number of updates.
    fn finish(self) -> u64 {
        drop(self.to);
        self.handle.join().unwrap()
    }
}

/// The learner thread: stores records, learns when asked, answers with snapshots; returns
/// the number of updates when the actor hangs up.
fn spawn_learner<L: Learner + 'static, F: Feed>(mut learner: L, mut feed: F) -> LearnerLink {
    let (to_learner, inbox) = channel::<ToLearner>();
    let (reply, from_learner) = channel();
    let handle = std::thread::spawn(move || {
        for msg in inbox {
            match msg {
                ToLearner::Records(r) => feed.put(r).unwrap(),
                ToLearner::Update(t) => {
                    let answer = match feed.batch().unwrap() {
                        None => None,
                        Some((batch, indices)) => {
                            let learned = learner.learn(&batch, t).unwrap();
                            if let (Some(i), Some(p)) = (indices, learned.priorities) {
                                feed.feedback(&i, &p).unwrap();
                            }
                            Some(learner.publish().unwrap())
                        }
                    };
                    reply.send(answer).unwrap();
                }
            }
        }
        learner.updates()
    });
    LearnerLink {
        to: to_learner,
        from: from_learner,
        handle,
    }
}

/// The actor thread's loop, on the single-threaded worker's schedule: act, step, hand the
/// step to the adder (`add` returns finished records), send records, and when an update is
/// due wait for the learner's answer. Returns the finished episodes' returns.
fn act_on_thread<A: Actor>(
    actor: &mut A,
    add: &mut impl FnMut(&mut A, Transition, &Acted) -> Result<Option<Value>>,
    env: &str,
    seed: u64,
    steps: u64,
    spec: &UpdateSpec,
    link: &LearnerLink,
) -> Vec<f64> {
    let mut envs = VectorEnv::new(vec![make(env, seed).unwrap()], Stepping::Sequential).unwrap();
    let mut state = envs.reset_all(Some(seed)).unwrap().remove(0);
    let (mut ret, mut returns, mut since_update) = (0.0, vec![], 0u64);
    for step in 0..steps {
        let t = step as f64 / steps as f64;
        let acted = actor.act(std::slice::from_ref(&state), true, t).unwrap();
        let r = envs.step(&acted.actions).unwrap().remove(0);
        ret += r.step.reward;
        let next = r.next_observation().clone();
        let transition = Transition {
            state: std::mem::replace(&mut state, next),
            action: acted.actions[0].clone(),
            reward: r.step.reward,
            terminated: r.step.terminated,
            truncated: r.step.truncated,
            next_state: r.step.observation,
        };
        if r.step.terminated || r.step.truncated {
            returns.push(std::mem::take(&mut ret));
        }
        if let Some(records) = add(actor, transition, &acted).unwrap() {
            link.to.send(ToLearner::Records(records)).unwrap();
        }
        since_update += 1;
        if spec.do_updates && step + 1 >= spec.steps_before_update && since_update >= spec.update_interval {
            since_update = 0;
            for _ in 0..spec.update_steps {
                link.to.send(ToLearner::Update(t)).unwrap();
                if let Some(snapshot) = link.from.recv().unwrap() {
                    actor.load(&snapshot).unwrap();
                    assert_eq!(actor.version(), Some(snapshot.version));
                }
            }
        }
    }
    returns
}

/// Runs the composed single-process `agent` on the single-threaded worker with the same
/// seeds: it must finish the same episodes with the same returns, after as many updates.
fn assert_the_composed_agent_runs_alike<A: Agent>(
    agent: A,
    env: &str,
    seed: u64,
    steps: u64,
    returns: &[f64],
    updates: u64,
) {
    let envs = VectorEnv::new(vec![make(env, seed).unwrap()], Stepping::Sequential).unwrap();
    let stats = SingleThreadedWorker::new(agent, envs, seed)
        .execute_timesteps(steps, |_| {})
        .unwrap();
    assert_eq!(stats.episode_rewards, returns);
    assert_eq!(stats.updates, updates);
}

fn config_json(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(format!("{}/../configs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// DQN (or Ape-X) from `config` on CartPole over two threads for 3,000 steps; asserts
/// RLgraph's thresholds (mean >= 25, max >= 100) and the composed agent's exact run.
fn dqn_over_threads(config: &str) {
    let (env, seed, steps) = ("CartPole-v1", 1, 3000);
    let config = DqnConfig::parse(&config_json(config)).unwrap();
    let probe = make(env, seed).unwrap();
    let (s, a) = (probe.state_space(), probe.action_space());

    let mut learner = DqnLearner::<Candle>::new(&config, s, a, seed).unwrap();
    let mut actor = dqn_actor::<Candle>(&config, s, a, seed).unwrap();
    actor.load(&learner.publish().unwrap()).unwrap();
    let feed = ReplayFeed {
        replay: dqn_replay(&config, s, a).unwrap(),
        // The composed agent samples its replay with this seed.
        rng: ChaCha8Rng::seed_from_u64(seed + 0x5eed),
        batch_size: config.update.batch_size,
    };
    let link = spawn_learner(learner, feed);
    let mut adder = NStepBuffer::new(config.n_step, config.discount, s, a);
    let apex = config.worker_side_priorities;
    // Records travel with their priorities when the actor computes them (Ape-X).
    let mut add = |actor: &mut GraphActor<Candle>, t: Transition, _: &Acted| -> Result<Option<Value>> {
        let done = adder.push(0, t);
        if done.is_empty() {
            return Ok(None);
        }
        let mut batch = transitions_batch(&done)?;
        if apex {
            let p = apex_priorities(actor, &batch, config.discount, config.n_step)?;
            if let Value::Dict(d) = &mut batch {
                d.insert("priorities".into(), Value::Float64(Array::new([p.len()], p)?));
            }
        }
        Ok(Some(batch))
    };
    let returns = act_on_thread(&mut actor, &mut add, env, seed, steps, &config.update, &link);
    let updates = link.finish();

    // RLgraph's thresholds for DQN on CartPole, as the single-process learning test.
    assert!(mean(&returns) >= 25.0, "{returns:?}");
    assert!(returns.iter().copied().fold(0.0, f64::max) >= 100.0, "{returns:?}");
    // The actor holds the last of the learner's snapshots: one per update, plus the first.
    assert_eq!(actor.version(), Some(updates + 1));

    let agent = DqnAgent::<Candle>::new(config, s, a, seed).unwrap();
    assert_the_composed_agent_runs_alike(agent, env, seed, steps, &returns, updates);
}

#[test]
fn dqn_actor_and_learner_on_two_threads_learn_cartpole_as_the_composed_agent_does() {
    dqn_over_threads("dqn-cartpole-rlgraph.json");
}

#[test]
fn ape_x_actor_and_learner_on_two_threads_learn_cartpole_as_the_composed_agent_does() {
    // Prioritized replay, 3-step returns, dueling heads; the actor prioritizes each record.
    dqn_over_threads("apex-cartpole.json");
}

#[test]
fn impala_actor_and_learner_on_two_threads_learn_the_grid_world_as_the_composed_agent_does() {
    let (env, seed, steps) = ("GridWorld-2x2", 0, 3000);
    let config = ImpalaConfig::parse(&config_json("impala-gridworld-2x2.json")).unwrap();
    let probe = make(env, seed).unwrap();
    let (s, a) = (probe.state_space(), probe.action_space());

    let mut learner = ImpalaLearner::<Candle>::new(&config, s, a, seed).unwrap();
    let mut actor = impala_actor::<Candle>(&config, s, a, seed).unwrap();
    actor.load(&learner.publish().unwrap()).unwrap();
    let feed = QueueFeed {
        queue: VecDeque::new(),
        capacity: config.queue_capacity,
        batch_size: config.update.batch_size,
    };
    let link = spawn_learner(learner, feed);
    let mut adder = RolloutAdder::new(config.rollout_length, s, a, None).unwrap();
    // The behaviour log-likelihood travels with the action, not in hidden agent state.
    let mut add = |_: &mut GraphActor<Candle>, t: Transition, acted: &Acted| -> Result<Option<Value>> {
        let log_prob = match &acted.extras["behaviour_log_probs"] {
            Value::Float32(l) => l.data()[0] as f64,
            other => panic!("{other:?}"),
        };
        adder.push(0, t, log_prob, None)
    };
    let returns = act_on_thread(&mut actor, &mut add, env, seed, steps, &config.update, &link);
    let updates = link.finish();

    // RLgraph's threshold for IMPALA on the 2x2 grid world, as the single-process test.
    assert!(mean(&returns) > -0.1, "{returns:?}");
    assert_eq!(actor.version(), Some(updates + 1));

    let agent = ImpalaAgent::<Candle>::new(config, s, a, seed).unwrap();
    assert_the_composed_agent_runs_alike(agent, env, seed, steps, &returns, updates);
}
