//! `rlgraph launch --emit kubernetes`: the manifests of a distributed Ape-X or IMPALA run, for
//! `kubectl apply -f`: a headless Service that gives every pod a DNS name, a ConfigMap with the
//! agent config and the cluster spec (written from those names), and one StatefulSet per role
//! (learner, replay shards, actors), so each pod has a stable name and its index from its
//! ordinal. Every role runs the same `rlgraph serve`; the learner's and the shards' gRPC
//! health service backs their readiness and liveness probes; the token (and TLS files) come
//! from Secrets the user creates.

use serde_json::{json, Value as Json};

use super::{RoleFiles, ServeWords};

/// The port every learner and replay shard pod serves on.
const PORT: u16 = 7100;
/// Where the ConfigMap, the token Secret, the TLS Secret and the run's volume are mounted.
const CONFIG_DIR: &str = "/etc/rlgraph";
const TOKEN_DIR: &str = "/etc/rlgraph-token";
const TLS_DIR: &str = "/etc/rlgraph-tls";
const DATA_DIR: &str = "/data";

/// The manifests as one YAML stream, for `actors` actors and `shards` replay shards running
/// `image`, the agent config's text `config`: every role runs `serve`'s words with `files`
/// moved to where the pods mount them, and has `grace_secs` between SIGTERM and SIGKILL.
pub fn kubernetes_manifests(
    files: &RoleFiles,
    serve: ServeWords<'_>,
    config: &str,
    (actors, shards): (usize, usize),
    (image, grace_secs): (&str, u64),
) -> Result<String, String> {
    if files.token_file.is_none() {
        return Err(
            "--emit kubernetes: pods reach each other over the cluster's network; give --token-file FILE \
                    (its content goes in the Secret rlgraph-token: kubectl create secret generic rlgraph-token \
                    --from-file=token=FILE)"
                .into(),
        );
    }
    let tls = files.tls_cert.is_some();
    let service = "rlgraph";
    let dns = |role: &str, i: usize| format!("{service}-{role}-{i}.{service}:{PORT}");
    let cluster = json!({
        "learner": [dns("learner", 0)],
        "replay": (0..shards).map(|i| dns("replay", i)).collect::<Vec<_>>(),
        "actor": (0..actors).map(|i| format!("{service}-actor-{i}")).collect::<Vec<_>>(),
    });
    // The files every role's command line names, where the pods mount them.
    let mounted = RoleFiles {
        config: format!("{CONFIG_DIR}/config.json").into(),
        token_file: Some(format!("{TOKEN_DIR}/token").into()),
        tls_cert: tls.then(|| format!("{TLS_DIR}/cert.pem").into()),
        tls_key: tls.then(|| format!("{TLS_DIR}/key.pem").into()),
        tls_ca: tls.then(|| format!("{TLS_DIR}/ca.pem").into()),
        out: Some(DATA_DIR.into()),
        // A pod comes back after a crash, an eviction or a rolling update: its learner and
        // shards go on from what they saved on their volume.
        resume: None,
        resume_if_present: true,
        // On the volume too: a recording is worth keeping only if it outlives the pod.
        record: files.record.as_ref().map(|_| format!("{DATA_DIR}/record").into()),
    };
    let command = |role: &str| -> Json {
        let mut words = vec!["rlgraph".to_string()];
        words.extend(
            serve(&mounted, role, None)
                .iter()
                .map(|w| w.to_string_lossy().into_owned()),
        );
        words.extend(["--cluster".into(), format!("{CONFIG_DIR}/cluster.json")]);
        json!(words)
    };
    let mut docs = vec![
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": service, "labels": {"app.kubernetes.io/part-of": service}},
            "spec": {
                "clusterIP": "None",
                // Names resolve before a pod is ready, so roles find each other while starting.
                "publishNotReadyAddresses": true,
                "selector": {"app.kubernetes.io/part-of": service},
                "ports": [{"name": "grpc", "port": PORT, "targetPort": PORT}],
            },
        }),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": format!("{service}-config"), "labels": {"app.kubernetes.io/part-of": service}},
            "data": {"config.json": config, "cluster.json": cluster.to_string()},
        }),
    ];
    let roles = [
        ("learner", 1, "2", "4Gi"),
        ("replay", shards, "1", "2Gi"),
        ("actor", actors, "1", "1Gi"),
    ];
    for (role, replicas, cpu, memory) in roles {
        if replicas == 0 {
            continue;
        }
        docs.push(stateful_set(
            service,
            role,
            replicas,
            cpu,
            memory,
            image,
            command(role),
            tls,
            grace_secs,
        ));
    }
    Ok(docs.iter().map(|d| format!("---\n{}", yaml(d, 0))).collect())
}

/// The StatefulSet of one role: `replicas` pods running `command`, each told its index by
/// its ordinal, given `grace_secs` between SIGTERM and SIGKILL; servers get a port, gRPC
/// probes and a volume for `--out`.
#[allow(clippy::too_many_arguments)] // One manifest's settings, each used once.
fn stateful_set(
    service: &str,
    role: &str,
    replicas: usize,
    cpu: &str,
    memory: &str,
    image: &str,
    command: Json,
    tls: bool,
    grace_secs: u64,
) -> Json {
    let name = format!("{service}-{role}");
    let labels = json!({"app.kubernetes.io/part-of": service, "app.kubernetes.io/component": role});
    let serves = role != "actor";
    let mut mounts = vec![
        json!({"name": "config", "mountPath": CONFIG_DIR, "readOnly": true}),
        json!({"name": "token", "mountPath": TOKEN_DIR, "readOnly": true}),
    ];
    let mut volumes = vec![
        json!({"name": "config", "configMap": {"name": format!("{service}-config")}}),
        json!({"name": "token", "secret": {"secretName": format!("{service}-token")}}),
    ];
    if tls {
        mounts.push(json!({"name": "tls", "mountPath": TLS_DIR, "readOnly": true}));
        volumes.push(json!({"name": "tls", "secret": {"secretName": format!("{service}-tls")}}));
    }
    let mut container = json!({
        "name": role,
        "image": image,
        "command": command,
        // The pod's ordinal is its index among the role's entries in the cluster spec.
        "env": [{
            "name": "RLGRAPH_INDEX",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}},
        }],
        "resources": {"requests": {"cpu": cpu, "memory": memory}},
        "volumeMounts": mounts,
    });
    let mut spec = json!({
        "serviceName": service,
        "replicas": replicas,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [],
                "volumes": volumes,
                // SIGTERM first: a shard or the learner drains (--drain-secs) and saves
                // before the pod goes.
                "terminationGracePeriodSeconds": grace_secs,
            },
        },
    });
    if serves {
        let probe = |delay: u32| json!({"grpc": {"port": PORT}, "initialDelaySeconds": delay, "periodSeconds": 10});
        container["ports"] = json!([{"name": "grpc", "containerPort": PORT}]);
        container["readinessProbe"] = probe(5);
        container["livenessProbe"] = probe(30);
        if let Some(mounts) = container["volumeMounts"].as_array_mut() {
            mounts.push(json!({"name": "data", "mountPath": DATA_DIR}));
        }
        spec["volumeClaimTemplates"] = json!([{
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
        }]);
    }
    spec["template"]["spec"]["containers"] = json!([container]);
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
    })
}

/// `value` as block YAML at `indent` spaces: maps and lists in block style, every string
/// double-quoted as JSON writes it (which YAML reads the same).
fn yaml(value: &Json, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    match value {
        Json::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                let key = Json::String(key.clone());
                match v {
                    Json::Object(m) if !m.is_empty() => out.push_str(&format!("{pad}{key}:\n{}", yaml(v, indent + 2))),
                    Json::Array(a) if !a.is_empty() => out.push_str(&format!("{pad}{key}:\n{}", yaml(v, indent))),
                    _ => out.push_str(&format!("{pad}{key}: {}\n", scalar(v))),
                }
            }
        }
        Json::Array(items) if !items.is_empty() => {
            for item in items {
                match item {
                    Json::Object(m) if !m.is_empty() => {
                        // The first key on the dash's line, the rest under it.
                        let body = yaml(item, indent + 2);
                        out.push_str(&format!("{pad}- {}", body.trim_start()));
                    }
                    Json::Array(a) if !a.is_empty() => out.push_str(&format!("{pad}-\n{}", yaml(item, indent + 2))),
                    _ => out.push_str(&format!("{pad}- {}\n", scalar(item))),
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
    out
}

/// A scalar, or an empty map or list, in flow style.
fn scalar(value: &Json) -> String {
    match value {
        Json::Object(_) => "{}".into(),
        Json::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serve words of a role as `role idx` and every file, so a manifest shows all it passed.
    fn echo(files: &RoleFiles, role: &str, index: Option<usize>) -> Vec<std::ffi::OsString> {
        let mut words = vec![role.into(), format!("{index:?}").into()];
        words.extend(files.given().into_iter().map(|p| p.into()));
        words.push(format!("resume_if_present={}", files.resume_if_present).into());
        words
    }

    #[test]
    fn roles_run_the_callers_words_with_the_files_where_the_pods_mount_them() {
        let files = RoleFiles {
            config: "/home/me/apex.json".into(),
            token_file: Some("/home/me/token".into()),
            out: Some("/home/me/run".into()),
            resume: Some("/home/me/old".into()),
            record: Some("/home/me/inputs".into()),
            ..RoleFiles::default()
        };
        let text = kubernetes_manifests(&files, &echo, "{}", (2, 1), ("img:1", 70)).unwrap();
        // Three StatefulSets (learner, replay, actor), each running `rlgraph ROLE None
        // /etc/rlgraph/config.json /etc/rlgraph-token/token /data /data/record
        // resume_if_present=true`.
        assert_eq!(text.matches("\"kind\": \"StatefulSet\"").count(), 3);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for role in ["learner", "replay", "actor"] {
            let words = [
                "rlgraph",
                role,
                "None",
                "/etc/rlgraph/config.json",
                "/etc/rlgraph-token/token",
                "/data",
                "/data/record",
                "resume_if_present=true",
                "--cluster",
            ]
            .map(|w| format!("- \"{w}\""));
            assert!(
                lines.windows(words.len()).any(|w| w == words),
                "{role}'s command in:\n{text}"
            );
        }
        assert!(!text.contains("/home/me"), "{text}");
        assert_eq!(text.matches("\"terminationGracePeriodSeconds\": 70").count(), 3);
        // With TLS, the three files from the TLS Secret's mount, and nothing of the caller's.
        let tls = RoleFiles {
            tls_cert: Some("/home/me/cert.pem".into()),
            tls_key: Some("/home/me/key.pem".into()),
            tls_ca: Some("/home/me/ca.pem".into()),
            ..files
        };
        let text = kubernetes_manifests(&tls, &echo, "{}", (1, 1), ("img:1", 70)).unwrap();
        assert!(!text.contains("/home/me"), "{text}");
        for file in ["cert.pem", "key.pem", "ca.pem"] {
            assert_eq!(
                text.matches(&format!("\"/etc/rlgraph-tls/{file}\"")).count(),
                3,
                "{file}"
            );
        }
    }

    #[test]
    fn a_run_without_a_token_is_refused_naming_the_flag() {
        let e = kubernetes_manifests(&RoleFiles::default(), &echo, "{}", (1, 1), ("img", 60)).unwrap_err();
        assert!(e.contains("--token-file FILE"), "{e}");
    }

    #[test]
    fn yaml_is_written_in_block_style_with_quoted_strings() {
        let value = json!({"a": 1, "b": {"c": "x: y", "d": [1, {"e": true, "f": "g"}, []]}, "h": {}});
        // By hand, YAML's block style for that JSON.
        let expected = "\
\"a\": 1
\"b\":
  \"c\": \"x: y\"
  \"d\":
  - 1
  - \"e\": true
    \"f\": \"g\"
  - []
\"h\": {}
";
        assert_eq!(yaml(&value, 0), expected);
    }
}
