"""PyTorch's side of scripts/bench-atari.sh: RLgraph's Pong DQN network written as a PyTorch
user writes it, timed on the CPU with the thread counts given.

- update: one DQN update of a batch of 32 (80x80x4 byte stacks scaled by 1/255 on the way
  in, three convolutions, a dueling head with 512-unit streams, double-Q targets from a
  target network, half the squared TD error, global norm clipped to 20, Adam at 1e-4), as
  `dqn_agent_for_pong.json` configures it;
- act: greedy actions for N stacked states (no gradient), from a numpy batch of bytes, the
  actions back as numpy.

Prints one JSON object per line: {"what", "threads", "batch", "ms", "device"} (the median of
repeated timings). `--device cuda` runs the network on the GPU; the batches still start on
the host as numpy bytes (a replay and environments on the host), and each timed call ends in
a read of its result (the loss, the actions), so the GPU's work is waited for.
"""

import json
import sys

import numpy as np
import torch
from torch import nn

from bench_peers import median_seconds


class PongDqn(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4), nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2), nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1), nn.ReLU(),
            nn.Flatten(),
        )
        # RLgraph's action adapter: a linear 512-unit pre-network, then the advantages.
        self.advantage = nn.Sequential(nn.Linear(2304, 512), nn.Linear(512, 6))
        self.value = nn.Sequential(nn.Linear(2304, 512), nn.ReLU(), nn.Linear(512, 1))

    def forward(self, x):
        h = self.convs(x.float() / 255.0)
        a = self.advantage(h)
        return self.value(h) + a - a.mean(dim=1, keepdim=True)


def median_ms(run, calls):
    return median_seconds(run, calls) * 1e3


DEVICE = "cpu"


def update_ms(threads):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(7)
    net, target = PongDqn().to(DEVICE), PongDqn().to(DEVICE)
    target.load_state_dict(net.state_dict())
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    n = 32
    s = torch.from_numpy(rng.integers(0, 256, (n, 4, 80, 80), dtype=np.uint8))
    sp = torch.from_numpy(rng.integers(0, 256, (n, 4, 80, 80), dtype=np.uint8))
    a = torch.from_numpy(rng.integers(0, 6, n))
    r = torch.from_numpy(rng.uniform(-1, 1, n).astype(np.float32))
    alive = torch.from_numpy((rng.uniform(0, 1, n) > 0.1).astype(np.float32))

    def step():
        s_, sp_, a_, r_, alive_ = (t.to(DEVICE) for t in (s, sp, a, r, alive))
        q = net(s_).gather(1, a_.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best = net(sp_).argmax(1, keepdim=True)
            y = r_ + 0.99 * alive_ * target(sp_).gather(1, best).squeeze(1)
        loss = 0.5 * ((y - q) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 20.0)
        opt.step()
        return loss.item()

    return median_ms(step, 50 if DEVICE != "cpu" else 5)


def act_ms(threads, batch):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    net = PongDqn().eval().to(DEVICE)
    states = np.random.default_rng(3).integers(0, 256, (batch, 4, 80, 80), dtype=np.uint8)

    def act():
        with torch.no_grad():
            return net(torch.from_numpy(states).to(DEVICE)).argmax(1).cpu().numpy()

    return median_ms(act, 200 if DEVICE != "cpu" else max(5, 64 // batch))


def main():
    global DEVICE
    args = sys.argv[1:]
    if args[:1] == ["--device"]:
        DEVICE, args = args[1], args[2:]
    threads = [int(t) for t in args] or [1]
    for t in threads:
        row = {"threads": t, "device": DEVICE}
        print(json.dumps({"what": "update", "batch": 32, "ms": update_ms(t), **row}), flush=True)
        for n in (1, 4, 16, 64):
            print(json.dumps({"what": "act", "batch": n, "ms": act_ms(t, n), **row}), flush=True)


if __name__ == "__main__":
    main()
