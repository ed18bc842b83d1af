//! The component view of an agent's graph, against the component tree its config describes:
//! the double-dueling DQN of `configs/` (one dense layer of 20 units named `hidden`, a
//! dueling head with a 16-unit state-value stream, on CartPole's 4 floats and 2 actions).

use std::collections::{BTreeMap, BTreeSet};

use agents::build_agent;
use rlgraph_core::component_layout::CHAR_WIDTH;
use rlgraph_core::spaces::{FloatBox, IntBox, Space};
use rlgraph_core::{ComponentView, Layout, ViewOptions};
use rlgraph_tests::both_backends;

fn spec() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../configs/double-dueling-dqn-cartpole.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn view<B: rlgraph_core::Backend>(options: ViewOptions) -> rlgraph_core::Result<ComponentView> {
    let states = Space::from(FloatBox::new([4]));
    let actions = Space::from(IntBox::new(2).unwrap());
    let agent = build_agent::<B>(&spec(), &states, &actions, 0).unwrap();
    let graph = agent.graph().unwrap();
    let shapes: BTreeMap<String, Vec<usize>> = graph
        .variables()
        .unwrap()
        .into_iter()
        .map(|(path, t)| (path, t.shape))
        .collect();
    ComponentView::new(graph.meta_graph(), &shapes, &options)
}

/// The components under one policy (`policy` or `target-policy`), relative to it.
const POLICY_PARTS: [&str; 5] = [
    "action-adapter",
    "dense-layer-state-value-stream",
    "neural-network",
    "neural-network/hidden",
    "state-value-node",
];

fn full_tree() -> BTreeSet<String> {
    let mut paths: BTreeSet<String> = ["", "/loss", "/optimizer", "/policy", "/target-policy", "/target-sync"]
        .iter()
        .map(|p| format!("dqn-agent{p}"))
        .collect();
    for policy in ["policy", "target-policy"] {
        for part in POLICY_PARTS {
            paths.insert(format!("dqn-agent/{policy}/{part}"));
        }
    }
    paths
}

both_backends! {
    fn the_component_view_draws_one_box_per_component_with_its_variables<B>() {
        let v = view::<B>(ViewOptions::default()).unwrap();
        assert_eq!(v.nodes.keys().cloned().collect::<BTreeSet<_>>(), full_tree());
        // Hand counts: kernel and bias per dense layer; 4*20+20 hidden, 20*2+2 advantages,
        // 20*16+16 state-value stream, 16*1+1 state value; Adam's two slots per policy
        // variable and one step counter.
        let elements = |p: &str| (v.nodes[p].variable_paths.len(), v.nodes[p].variable_elements);
        assert_eq!(elements("dqn-agent/policy/neural-network/hidden"), (2, 100));
        assert_eq!(elements("dqn-agent/policy/action-adapter"), (2, 42));
        assert_eq!(elements("dqn-agent/policy/dense-layer-state-value-stream"), (2, 336));
        assert_eq!(elements("dqn-agent/target-policy/state-value-node"), (2, 17));
        assert_eq!(elements("dqn-agent/optimizer"), (17, 2 * (100 + 42 + 336 + 17) + 1));
        assert_eq!(elements("dqn-agent/loss"), (0, 0));
        // Data flows from the root into both policies, from both into the loss, and from the
        // loss into the optimizer's step; inside a policy, the network feeds its heads.
        for (from, to, method) in [
            ("dqn-agent", "dqn-agent/policy", "get_q_values"),
            ("dqn-agent/policy", "dqn-agent/loss", "loss"),
            ("dqn-agent/target-policy", "dqn-agent/loss", "loss"),
            ("dqn-agent/loss", "dqn-agent/optimizer", "step"),
            ("dqn-agent/policy/neural-network", "dqn-agent/policy/action-adapter", "call"),
        ] {
            let methods = v.edges.get(&(from.to_string(), to.to_string()));
            assert!(methods.is_some_and(|m| m.contains(method)), "{from} -> {to}: {methods:?}");
        }
        assert!(!v.edges.contains_key(&("dqn-agent/loss".to_string(), "dqn-agent/policy".to_string())));

        // The DOT: one box per component, each named, one line per edge, and a cluster for
        // each component with components under it (root, two policies, two networks).
        let dot = v.to_dot();
        let boxes: Vec<&str> = dot.lines().filter(|l| l.contains(" [label=") && !l.contains("->")).collect();
        assert_eq!(boxes.len(), 16, "{dot}");
        for path in full_tree() {
            let name = path.rsplit('/').next().unwrap();
            assert!(boxes.iter().any(|b| b.contains(&format!("label=\"{name}"))), "{name} unnamed");
        }
        assert_eq!(dot.lines().filter(|l| l.contains("->")).count(), v.edges.len());
        assert_eq!(dot.matches("subgraph cluster_").count(), 5);
        assert_eq!(dot.matches('{').count(), dot.matches('}').count());
        assert!(dot.contains("17 variables, 991 elements"));
        // Each box names its kind: the config's layer types, and the agent's own parts.
        for (path, kind) in [
            ("dqn-agent/policy", "dueling-policy"),
            ("dqn-agent/policy/neural-network", "neural-network"),
            ("dqn-agent/policy/neural-network/hidden", "dense"),
            ("dqn-agent/loss", "dqn-loss"),
            ("dqn-agent/optimizer", "adam"),
            ("dqn-agent/target-sync", "synchronizable"),
        ] {
            assert_eq!(v.nodes[path].kind, kind, "{path}");
        }
        assert!(dot.contains("label=\"hidden (dense)\\n2 variables, 100 elements"), "{dot}");
        // The full list of variables is in the JSON.
        let json = v.to_json();
        let optimizer = json["nodes"].as_array().unwrap().iter().find(|n| n["path"] == "dqn-agent/optimizer").unwrap();
        assert_eq!(optimizer["variables"].as_array().unwrap().len(), 17);
    }

    fn the_page_layout_nests_every_box_in_its_scopes_and_flows_left_to_right<B>() {
        let v = view::<B>(ViewOptions::default()).unwrap();
        let layout = Layout::new(&v, &|p| v.label_lines(p));
        assert_eq!(layout.boxes.keys().cloned().collect::<BTreeSet<_>>(), full_tree());
        let scopes: BTreeSet<String> = ["", "/policy", "/target-policy", "/policy/neural-network", "/target-policy/neural-network"]
            .iter()
            .map(|p| format!("dqn-agent{p}"))
            .collect();
        assert_eq!(layout.clusters.keys().cloned().collect::<BTreeSet<_>>(), scopes);
        let under = |p: &str, s: &str| p == s || p.starts_with(&format!("{s}/"));
        for (path, rect) in &layout.boxes {
            for (scope, frame) in &layout.clusters {
                assert_eq!(frame.contains(rect), under(path, scope), "{path} in {scope}");
            }
            // The box is wide enough for its longest label line.
            let chars = v.label_lines(path).iter().map(|l| l.len()).max().unwrap();
            assert!(rect.w >= chars as f64 * CHAR_WIDTH, "{path}");
            for (other, r) in &layout.boxes {
                assert!(path == other || !rect.overlaps(r), "{path} overlaps {other}");
            }
        }
        for (a, ra) in &layout.clusters {
            for (b, rb) in &layout.clusters {
                if a != b && !under(a, b) && !under(b, a) {
                    assert!(!ra.overlaps(rb), "{a} overlaps {b}");
                }
            }
        }
        assert!(layout.clusters.values().all(|r| r.x + r.w <= layout.width && r.y + r.h <= layout.height));
        // Data flows root -> policies -> loss -> optimizer: each lies right of what feeds it.
        let right_of = |a: &rlgraph_core::Rect, b: &rlgraph_core::Rect| a.x >= b.x + b.w;
        let policy = layout.clusters["dqn-agent/policy"];
        assert!(right_of(&policy, &layout.boxes["dqn-agent"]));
        assert!(right_of(&layout.boxes["dqn-agent/loss"], &policy));
        assert!(right_of(&layout.boxes["dqn-agent/loss"], &layout.clusters["dqn-agent/target-policy"]));
        assert!(right_of(&layout.boxes["dqn-agent/optimizer"], &layout.boxes["dqn-agent/loss"]));
        // The hover text's spaces: the 20-unit hidden layer maps the 4 unbounded floats of `view` to 20.
        let hidden = &v.nodes["dqn-agent/policy/neural-network/hidden"].signatures["call"];
        assert_eq!(hidden.inputs.iter().collect::<Vec<_>>(), ["inputs: FloatBox(float32, [4], batch)"]);
        assert_eq!(hidden.outputs.iter().collect::<Vec<_>>(), ["FloatBox(float32, [20], batch)"]);
        // Merged boxes name the inner component a method belongs to.
        let merged = view::<B>(ViewOptions { depth: Some(1), ..ViewOptions::default() }).unwrap();
        assert!(merged.nodes["dqn-agent/policy"].signatures.contains_key("neural-network/hidden.call"));
    }

    fn profile_timings_colour_the_boxes_by_their_share_of_backend_time<B>() {
        // Plan-step time by component, as a profile records it: 600 ns in the policy's
        // hidden layer, 200 in its action adapter, 200 in the loss; a path outside the graph
        // is left out.
        let times: BTreeMap<String, f64> = [
            ("dqn-agent/policy/neural-network/hidden", 600.0),
            ("dqn-agent/policy/action-adapter", 200.0),
            ("dqn-agent/loss", 200.0),
            ("elsewhere/component", 5000.0),
        ]
        .into_iter()
        .map(|(p, t)| (p.to_string(), t))
        .collect();
        let mut v = view::<B>(ViewOptions::default()).unwrap();
        v.set_timings(&times);
        assert_eq!(v.nodes["dqn-agent/policy/neural-network/hidden"].timing, Some((600.0, 0.6)));
        assert_eq!(v.nodes["dqn-agent/loss"].timing, Some((200.0, 0.2)));
        assert_eq!(v.nodes["dqn-agent/optimizer"].timing, Some((0.0, 0.0)));
        // The hottest box is full red, one a third as hot a third of the way, an idle one pale.
        assert_eq!(v.fill("dqn-agent/policy/neural-network/hidden"), "#bd0026");
        assert_eq!(v.fill("dqn-agent/optimizer"), "#ffffcc");
        assert_eq!(rlgraph_core::component_view::heat(0.5), "#fd8d3c");
        let dot = v.to_dot();
        assert!(dot.contains("60.0% of backend time (0.0 ms)\", fillcolor=\"#bd0026\""), "{dot}");
        // Merged by depth 1, the policy holds its layers' time: 80%.
        let mut merged = view::<B>(ViewOptions { depth: Some(1), ..ViewOptions::default() }).unwrap();
        merged.set_timings(&times);
        assert_eq!(merged.nodes["dqn-agent/policy"].timing, Some((800.0, 0.8)));
        assert_eq!(merged.fill("dqn-agent/policy"), "#bd0026");
    }

    fn depth_collapses_scopes_into_single_boxes<B>() {
        let v = view::<B>(ViewOptions { depth: Some(1), ..ViewOptions::default() }).unwrap();
        let expected: BTreeSet<String> = full_tree().into_iter().filter(|p| p.matches('/').count() <= 1).collect();
        assert_eq!(v.nodes.keys().cloned().collect::<BTreeSet<_>>(), expected);
        let policy = &v.nodes["dqn-agent/policy"];
        assert_eq!((policy.merged, policy.variable_paths.len(), policy.variable_elements), (5, 8, 495));
        assert!(v.to_dot().contains("policy (dueling-policy, +5 inside)"));
        // Nothing is lost when collapsing: every variable lands in some box.
        let all = view::<B>(ViewOptions::default()).unwrap();
        let count = |v: &ComponentView| v.nodes.values().map(|n| n.variable_paths.len()).sum::<usize>();
        assert_eq!(count(&v), count(&all));
        // Depth 0 is the root alone, holding everything.
        let root = view::<B>(ViewOptions { depth: Some(0), ..ViewOptions::default() }).unwrap();
        assert_eq!(root.nodes.len(), 1);
        assert_eq!((root.nodes["dqn-agent"].merged, count(&root)), (15, count(&all)));
        assert!(root.edges.is_empty());
    }

    fn a_method_focus_keeps_only_what_the_method_reaches<B>() {
        let v = view::<B>(ViewOptions { method: Some("update".into()), ..ViewOptions::default() }).unwrap();
        // The update never syncs the target network.
        let expected: BTreeSet<String> = full_tree().into_iter().filter(|p| !p.ends_with("target-sync")).collect();
        assert_eq!(v.nodes.keys().cloned().collect::<BTreeSet<_>>(), expected);
        assert_eq!(v.reachable(), expected);
        // Acting reads the policy alone.
        let q = view::<B>(ViewOptions { method: Some("get_q_values".into()), ..ViewOptions::default() }).unwrap();
        assert!(q.nodes.keys().all(|p| !p.contains("target") && !p.ends_with("loss") && !p.ends_with("optimizer")));
        assert_eq!(q.reachable(), q.nodes.keys().cloned().collect());
        // A scope focus draws one sub-tree, its root first.
        let s = view::<B>(ViewOptions { scope: Some("dqn-agent/target-policy".into()), depth: Some(1), ..ViewOptions::default() }).unwrap();
        assert_eq!(s.root, "dqn-agent/target-policy");
        assert_eq!(s.nodes.len(), 5);
        assert_eq!(s.nodes["dqn-agent/target-policy/neural-network"].merged, 1);
    }

    fn the_plan_view_draws_the_compiled_steps_with_fusion_marked<B>() {
        let states = Space::from(FloatBox::new([4]));
        let actions = Space::from(IntBox::new(2).unwrap());
        let agent = build_agent::<B>(&spec(), &states, &actions, 0).unwrap();
        let dot = agent.graph().unwrap().plan_dot("get_q_values").unwrap();
        // The Q-values: the hidden layer, the state-value stream with the state-value node
        // fused behind it (its only reader), the advantages, and the dueling merge. The hidden
        // layer's result has two readers, so nothing fuses behind it.
        assert!(dot.contains("5 kernels in 4 steps"), "{dot}");
        let steps: Vec<&str> = dot.lines().filter(|l| l.trim_start().starts_with('s') && l.contains("[label=")).collect();
        assert_eq!(steps.len(), 4, "{dot}");
        let fused: Vec<&&str> = steps.iter().filter(|l| l.contains("penwidth")).collect();
        assert_eq!(fused.len(), 1);
        assert!(fused[0].contains("dense-layer-state-value-stream/apply\\n→ dqn-agent/policy/state-value-node/apply"), "{}", fused[0]);
        assert!(dot.contains("in0 -> s0;") && dot.contains("-> out0;"), "{dot}");
        assert!(agent.graph().unwrap().plan_dot("nope").is_err());
    }

    fn unknown_methods_and_scopes_are_refused_by_name<B>() {
        let err = view::<B>(ViewOptions { method: Some("updte".into()), ..ViewOptions::default() }).unwrap_err().to_string();
        assert!(err.contains("updte") && err.contains("update") && err.contains("get_q_values"), "{err}");
        let err = view::<B>(ViewOptions { scope: Some("dqn-agent/polcy".into()), ..ViewOptions::default() }).unwrap_err().to_string();
        assert!(err.contains("dqn-agent/polcy"), "{err}");
    }
}
