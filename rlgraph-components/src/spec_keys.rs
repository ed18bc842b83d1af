//! The keys every built-in component spec takes, in one table: the spec readers refuse any
//! other key with it, and the config schema (`rlgraph schema`) lists exactly these, so an
//! editor and `rlgraph train` refuse the same keys.

/// One kind of component spec: the `type` names that pick it and the keys it takes besides
/// `type`.
#[derive(Debug)]
pub struct SpecKeys {
    /// Where it may appear: `component` (a layer, preprocessor, loss, memory or utility),
    /// `optimizer`, `schedule` or `action-adapter`.
    pub group: &'static str,
    /// The type names that pick it, normalized as [`crate::spec::normalize_type`] leaves them
    /// (`denselayer` stands for `DenseLayer`, `dense_layer` and `dense-layer`); the first is
    /// the name the docs show.
    pub names: &'static [&'static str],
    /// With `Some(key)`, this variant is the one chosen by `key: true` (a reshape that folds
    /// the time rank, say); the variant without a selector is chosen otherwise.
    pub selector: Option<&'static str>,
    /// The keys it takes besides `type`.
    pub keys: &'static [&'static str],
}

const fn component(names: &'static [&'static str], keys: &'static [&'static str]) -> SpecKeys {
    SpecKeys {
        group: "component",
        names,
        selector: None,
        keys,
    }
}

const fn optimizer(names: &'static [&'static str], keys: &'static [&'static str]) -> SpecKeys {
    SpecKeys {
        group: "optimizer",
        names,
        selector: None,
        keys,
    }
}

/// Dense layers.
pub const DENSE: SpecKeys = component(
    &["dense", "denselayer"],
    &[
        "units",
        "activation",
        "activation_params",
        "use_bias",
        "weights_spec",
        "biases_spec",
        "scope",
    ],
);
/// 2-D convolutions.
pub const CONV2D: SpecKeys = component(
    &["conv2d", "conv2dlayer"],
    &[
        "filters",
        "kernel_size",
        "strides",
        "padding",
        "kernel_spec",
        "activation",
        "activation_params",
        "use_bias",
        "weights_spec",
        "biases_spec",
        "scope",
    ],
);
/// 2-D max pooling.
pub const MAX_POOL2D: SpecKeys = component(
    &["maxpool2d", "maxpooling2d", "maxpool2dlayer"],
    &["pool_size", "strides", "padding", "scope"],
);
/// LSTM layers (RLgraph's `LSTMLayer` keys).
pub const LSTM: SpecKeys = component(
    &["lstm", "lstmlayer"],
    &[
        "units",
        "forget_bias",
        "return_sequences",
        "time_major",
        "use_peepholes",
        "cell_clip",
        "static_loop",
        "parallel_iterations",
        "swap_inputs",
        "stateful_batch_size",
        "scope",
    ],
);
/// A network of layers.
pub const NEURAL_NETWORK: SpecKeys = component(&["neuralnetwork", "network"], &["layers", "scope", "num_inputs"]);
/// A reshape that folds the time rank into the batch rank.
pub const RESHAPE_FOLD: SpecKeys = SpecKeys {
    selector: Some("fold_time_rank"),
    ..component(&["reshape"], &["fold_time_rank", "scope"])
};
/// A reshape that unfolds the time rank out of the batch rank.
pub const RESHAPE_UNFOLD: SpecKeys = SpecKeys {
    selector: Some("unfold_time_rank"),
    ..component(&["reshape"], &["unfold_time_rank", "scope"])
};
/// A reshape that flattens or takes a new shape.
pub const RESHAPE: SpecKeys = component(&["reshape"], &["flatten", "flatten_categories", "new_shape", "scope"]);
/// Epsilon-greedy exploration.
pub const EPSILON_EXPLORATION: SpecKeys = component(
    &["epsilonexploration", "exploration"],
    &["epsilon_spec", "decay_spec", "scope"],
);
/// Gaussian action noise.
pub const GAUSSIAN_NOISE: SpecKeys = component(&["gaussiannoise"], &["mean", "stddev", "scope"]);
const SCHEDULE_KEYS: [&str; 12] = [
    "from",
    "to",
    "from_",
    "to_",
    "power",
    "decay_rate",
    "constant_value",
    "value",
    "max_time_steps",
    "resolution",
    "end_time_percentage",
    "start_time_percentage",
];

/// A schedule's keys and a scope.
const DECAY_KEYS: [&str; 13] = {
    let mut keys = ["scope"; 13];
    let mut i = 0;
    while i < SCHEDULE_KEYS.len() {
        keys[i] = SCHEDULE_KEYS[i];
        i += 1;
    }
    keys
};

/// The schedule kinds that take `power` (polynomial ones) and `decay_rate` (exponential
/// ones), each also written with a `decay` suffix; the schedule reader refuses either key
/// for any other kind.
pub const POWER_KINDS: [&str; 2] = ["polynomial", "poly"];
/// See [`POWER_KINDS`].
pub const DECAY_RATE_KINDS: [&str; 2] = ["exponential", "exp"];

/// The keys of a schedule written as an object (RLgraph's `TimeDependentParameter`).
pub const SCHEDULE: SpecKeys = SpecKeys {
    group: "schedule",
    names: &[
        "constant",
        "constantdecay",
        "linear",
        "lineardecay",
        "polynomial",
        "polynomialdecay",
        "poly",
        "exponential",
        "exponentialdecay",
        "exp",
    ],
    selector: None,
    keys: &SCHEDULE_KEYS,
};
/// A schedule as a component of its own (its keys and a scope).
pub const DECAY: SpecKeys = component(
    &[
        "constantdecay",
        "lineardecay",
        "polynomialdecay",
        "exponentialdecay",
        "timedependentparameter",
    ],
    &DECAY_KEYS,
);

/// Clipping preprocessor.
pub const CLIP: SpecKeys = component(&["clip"], &["min", "max", "scope"]);
/// Dividing preprocessor.
pub const DIVIDE: SpecKeys = component(&["divide"], &["divisor", "scope"]);
/// Multiplying preprocessor.
pub const MULTIPLY: SpecKeys = component(&["multiply"], &["factor", "scope"]);
/// Normalizing preprocessor.
pub const NORMALIZE: SpecKeys = component(&["normalize"], &["scope"]);
/// Rounding to bytes.
pub const ROUND_TO_UINT8: SpecKeys = component(&["roundtouint8"], &["scope"]);
/// Grayscale.
pub const GRAYSCALE: SpecKeys = component(&["grayscale"], &["keep_rank", "weights", "scope"]);
/// Image crop.
pub const IMAGE_CROP: SpecKeys = component(&["imagecrop"], &["x", "y", "width", "height", "scope"]);
/// Image resize.
pub const IMAGE_RESIZE: SpecKeys = component(&["imageresize"], &["width", "height", "interpolation", "scope"]);
/// Image binarization.
pub const IMAGE_BINARY: SpecKeys = component(&["imagebinary"], &["threshold", "keep_rank", "scope"]);
/// Transpose.
pub const TRANSPOSE: SpecKeys = component(&["transpose"], &["perm", "scope"]);
/// Running standardization.
pub const MOVING_STANDARDIZE: SpecKeys = component(&["movingstandardize"], &["scope"]);
/// Frame stacking.
pub const SEQUENCE: SpecKeys = component(&["sequence"], &["sequence_length", "batch_size", "add_rank", "scope"]);
/// Concatenating a container's leaves (the preprocessor, which a bare `concat` names).
pub const CONCAT_LEAVES: SpecKeys = component(&["concat", "concatleaves"], &["scope"]);
/// Dtype conversion.
pub const CONVERT_TYPE: SpecKeys = component(&["converttype"], &["to_dtype", "scope"]);

/// DQN's loss.
pub const DQN_LOSS: SpecKeys = component(
    &["dqnlossfunction", "dqnloss"],
    &[
        "discount",
        "double_q",
        "huber_loss",
        "importance_weights",
        "n_step",
        "shared_container_action_target",
        "container_actions_loss",
        "scope",
    ],
);
/// The actor-critic loss.
pub const ACTOR_CRITIC_LOSS: SpecKeys = component(
    &["actorcriticlossfunction", "actorcriticloss"],
    &[
        "discount",
        "gae_lambda",
        "weight_pg",
        "weight_vf",
        "weight_entropy",
        "scope",
    ],
);
/// PPO's loss.
pub const PPO_LOSS: SpecKeys = component(
    &["ppolossfunction", "ppoloss"],
    &[
        "clip_ratio",
        "value_function_clipping",
        "standardize_advantages",
        "weight_vf",
        "weight_entropy",
        "scope",
    ],
);
/// IMPALA's loss.
pub const IMPALA_LOSS: SpecKeys = component(
    &["impalalossfunction", "impalaloss"],
    &[
        "discount",
        "rho_bar",
        "c_bar",
        "pg_rho_bar",
        "weight_pg",
        "weight_vf",
        "weight_entropy",
        "reward_clipping",
        "scope",
    ],
);
/// SAC's loss.
pub const SAC_LOSS: SpecKeys = component(
    &["saclossfunction", "sacloss"],
    &["discount", "initial_alpha", "target_entropy", "scope"],
);
/// Categorical cross-entropy.
pub const CROSS_ENTROPY_LOSS: SpecKeys = component(
    &[
        "categoricalcrossentropyloss",
        "crossentropyloss",
        "categoricalcrossentropylossfunction",
        "crossentropylossfunction",
    ],
    &["scope"],
);
/// Euclidean distance.
pub const EUCLIDEAN_DISTANCE_LOSS: SpecKeys = component(
    &[
        "euclidiandistanceloss",
        "euclideandistanceloss",
        "euclidiandistancelossfunction",
        "euclideandistancelossfunction",
    ],
    &["scope"],
);
/// Generalized advantage estimation.
pub const GAE: SpecKeys = component(
    &[
        "generalizedadvantageestimation",
        "gae",
        "generalizedadvantageestimationfunction",
        "gaefunction",
    ],
    &["discount", "gae_lambda", "scope"],
);
/// Discounted sums over sequences.
pub const SEQUENCE_HELPER: SpecKeys = component(&["sequencehelper", "sequencehelperfunction"], &["decay", "scope"]);
/// V-trace.
pub const V_TRACE: SpecKeys = component(
    &["vtrace", "vtracefunction"],
    &["rho_bar", "c_bar", "pg_rho_bar", "scope"],
);

/// Concatenation (the layer; a bare `concat` is the preprocessor).
pub const CONCAT: SpecKeys = component(&["concatlayer"], &["axis", "num_inputs", "scope"]);
/// Residual blocks.
pub const RESIDUAL: SpecKeys = component(
    &["residual", "residuallayer"],
    &["residual_unit", "repeats", "activation", "activation_params", "scope"],
);
/// Embedding lookups.
pub const EMBEDDING: SpecKeys = component(
    &["embeddinglookup", "embedding", "embeddinglookuplayer"],
    &[
        "embed_dim",
        "vocab_size",
        "initializer_spec",
        "partition_strategy",
        "trainable",
        "pad_empty",
        "scope",
    ],
);
/// Local response normalization.
pub const LOCAL_RESPONSE_NORMALIZATION: SpecKeys = component(
    &["localresponsenormalization", "localresponsenormalizationlayer"],
    &["depth_radius", "bias", "alpha", "beta", "scope"],
);
/// Softmax.
pub const SOFTMAX: SpecKeys = component(&["softmax"], &["scope"]);
/// Slicing.
pub const SLICE: SpecKeys = component(&["slice"], &["squeeze", "scope"]);
/// Splitting a container into its parts.
pub const CONTAINER_SPLITTER: SpecKeys = component(&["containersplitter"], &["output_order", "_args", "scope"]);
/// Merging parts into a container.
pub const CONTAINER_MERGER: SpecKeys = component(&["containermerger"], &["input_names", "_args", "scope"]);
/// Variables another component's can be copied into.
pub const SYNCHRONIZABLE: SpecKeys = component(&["synchronizable"], &["sync_tau", "scope"]);
/// A stack of preprocessors.
pub const PREPROCESSOR_STACK: SpecKeys = component(&["preprocessorstack"], &["preprocessors", "_args", "scope"]);
/// Categorical distribution.
pub const CATEGORICAL: SpecKeys = component(&["categorical", "categoricaldistribution"], &["scope"]);
/// Bernoulli distribution.
pub const BERNOULLI: SpecKeys = component(&["bernoulli", "bernoullidistribution"], &["scope"]);
/// Normal distribution.
pub const NORMAL: SpecKeys = component(&["normal", "normaldistribution"], &["scope"]);
/// Beta distribution.
pub const BETA: SpecKeys = component(&["beta", "betadistribution"], &["low", "high", "scope"]);
/// Tanh-squashed normal distribution.
pub const SQUASHED_NORMAL: SpecKeys = component(
    &["squashednormal", "squashednormaldistribution"],
    &["low", "high", "scope"],
);
/// Gumbel-softmax distribution.
pub const GUMBEL_SOFTMAX: SpecKeys = component(
    &["gumbelsoftmax", "gumbelsoftmaxdistribution"],
    &["temperature", "scope"],
);

/// Uniform replay memory.
pub const REPLAY_MEMORY: SpecKeys = component(&["replaymemory", "replay"], &["capacity", "scope"]);
/// Prioritized replay memory.
pub const PRIORITIZED_REPLAY: SpecKeys = component(&["prioritizedreplay"], &["capacity", "alpha", "beta", "scope"]);
/// Ring buffer.
pub const RING_BUFFER: SpecKeys = component(&["ringbuffer"], &["capacity", "scope"]);
/// FIFO queue.
pub const FIFO_QUEUE: SpecKeys = component(&["fifoqueue"], &["capacity", "scope"]);

/// Plain gradient descent.
pub const SGD: SpecKeys = optimizer(
    &["sgd", "sgdoptimizer", "gradientdescent", "gradientdescentoptimizer"],
    &["learning_rate", "clip_grad_norm", "scope"],
);
/// Adam.
pub const ADAM: SpecKeys = optimizer(
    &["adam", "adamoptimizer"],
    &[
        "learning_rate",
        "clip_grad_norm",
        "scope",
        "beta1",
        "beta2",
        "epsilon",
        "beta_1",
        "beta_2",
    ],
);
/// RMSProp.
pub const RMSPROP: SpecKeys = optimizer(
    &["rmsprop", "rmspropoptimizer"],
    &[
        "learning_rate",
        "clip_grad_norm",
        "scope",
        "decay",
        "alpha",
        "epsilon",
        "centered",
        "momentum",
    ],
);
/// Adagrad.
pub const ADAGRAD: SpecKeys = optimizer(
    &["adagrad", "adagradoptimizer"],
    &[
        "learning_rate",
        "clip_grad_norm",
        "scope",
        "initial_accumulator_value",
        "epsilon",
    ],
);
/// Adadelta.
pub const ADADELTA: SpecKeys = optimizer(
    &["adadelta", "adadeltaoptimizer"],
    &["learning_rate", "clip_grad_norm", "scope", "rho", "epsilon"],
);

/// A policy's action adapter (`policy_spec.action_adapter_spec`); it has no `type`.
pub const ACTION_ADAPTER: SpecKeys = SpecKeys {
    group: "action-adapter",
    names: &[],
    selector: None,
    keys: &[
        "pre_network_spec",
        "weights_spec",
        "biases_spec",
        "activation",
        "activation_params",
        "scope",
    ],
};

/// Every built-in spec kind: what the schema is made from.
pub const ALL: &[&SpecKeys] = &[
    &DENSE,
    &CONV2D,
    &MAX_POOL2D,
    &LSTM,
    &NEURAL_NETWORK,
    &RESHAPE_FOLD,
    &RESHAPE_UNFOLD,
    &RESHAPE,
    &EPSILON_EXPLORATION,
    &GAUSSIAN_NOISE,
    &DECAY,
    &CLIP,
    &DIVIDE,
    &MULTIPLY,
    &NORMALIZE,
    &ROUND_TO_UINT8,
    &GRAYSCALE,
    &IMAGE_CROP,
    &IMAGE_RESIZE,
    &IMAGE_BINARY,
    &TRANSPOSE,
    &MOVING_STANDARDIZE,
    &SEQUENCE,
    &CONCAT_LEAVES,
    &CONVERT_TYPE,
    &DQN_LOSS,
    &ACTOR_CRITIC_LOSS,
    &PPO_LOSS,
    &IMPALA_LOSS,
    &SAC_LOSS,
    &CROSS_ENTROPY_LOSS,
    &EUCLIDEAN_DISTANCE_LOSS,
    &GAE,
    &SEQUENCE_HELPER,
    &V_TRACE,
    &CONCAT,
    &RESIDUAL,
    &EMBEDDING,
    &LOCAL_RESPONSE_NORMALIZATION,
    &SOFTMAX,
    &SLICE,
    &CONTAINER_SPLITTER,
    &CONTAINER_MERGER,
    &SYNCHRONIZABLE,
    &PREPROCESSOR_STACK,
    &CATEGORICAL,
    &BERNOULLI,
    &NORMAL,
    &BETA,
    &SQUASHED_NORMAL,
    &GUMBEL_SOFTMAX,
    &REPLAY_MEMORY,
    &PRIORITIZED_REPLAY,
    &RING_BUFFER,
    &FIFO_QUEUE,
    &SGD,
    &ADAM,
    &RMSPROP,
    &ADAGRAD,
    &ADADELTA,
    &SCHEDULE,
    &ACTION_ADAPTER,
];
