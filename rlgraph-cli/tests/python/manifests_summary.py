"""Reads a YAML stream of Kubernetes manifests and prints, as one JSON object, what a test
checks of them: each object's kind and name, each StatefulSet's replicas, service name,
container command, probes, ports and termination grace, and the ConfigMap's cluster spec and config.

Usage: manifests_summary.py FILE
"""

import json
import sys

import yaml

with open(sys.argv[1]) as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
out = {"objects": [[d["kind"], d["metadata"]["name"]] for d in docs], "sets": {}}
for d in docs:
    if d["kind"] == "ConfigMap":
        out["cluster"] = json.loads(d["data"]["cluster.json"])
        out["config"] = json.loads(d["data"]["config.json"])
    if d["kind"] == "Service":
        out["service"] = {"clusterIP": d["spec"]["clusterIP"], "ports": [p["port"] for p in d["spec"]["ports"]]}
    if d["kind"] == "StatefulSet":
        pod = d["spec"]["template"]["spec"]
        c = pod["containers"][0]
        out["sets"][d["metadata"]["name"]] = {
            "replicas": d["spec"]["replicas"],
            "serviceName": d["spec"]["serviceName"],
            "command": c["command"],
            "readiness": c.get("readinessProbe", {}).get("grpc"),
            "liveness": c.get("livenessProbe", {}).get("grpc"),
            "ports": [p["containerPort"] for p in c.get("ports", [])],
            "index_from": c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
            "secrets": sorted(v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v),
            "grace": pod["terminationGracePeriodSeconds"],
        }
print(json.dumps(out))
