"""The same DQN update as ding4j's DqnUpdateBenchmark, in Python PyTorch (Debian's python3-torch), for the side by
side in benchmarks/README.md: DI-engine's CartPole net (4-128-128-64, dueling), batch 64, double DQN, MSE, Adam
(lr 1e-3), one intra-op thread, the target net synced every 100 updates. Prints p50/p90/p99 in microseconds.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 benchmarks/python/dqn_update.py [updates]
"""
import sys
import time

import torch
import torch.nn as nn


class QNet(nn.Module):
    def __init__(self, obs=4, actions=2, hidden=(128, 128, 64)):
        super().__init__()
        layers, width = [], obs
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.encoder = nn.Sequential(*layers)
        self.a = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, actions))
        self.v = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, x):
        h = self.encoder(x)
        a = self.a(h)
        return self.v(h) + (a - a.mean(dim=1, keepdim=True))


def main():
    updates = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    torch.set_num_threads(1)
    torch.manual_seed(0)
    online, target = QNet(), QNet()
    target.load_state_dict(online.state_dict())
    adam = torch.optim.Adam(online.parameters(), lr=1e-3)
    obs, next_obs = torch.randn(64, 4), torch.randn(64, 4)
    action = torch.randint(0, 2, (64,))
    ret, bootstrap, weight = torch.ones(64), torch.full((64,), 0.97), torch.ones(64)
    times = []
    for i in range(updates):
        start = time.perf_counter_ns()
        q = online(obs)
        q_taken = q.gather(1, action.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            target_q = target(next_obs)
            next_action = online(next_obs).argmax(dim=1, keepdim=True)
            y = ret + bootstrap * target_q.gather(1, next_action).squeeze(1)
        td = q_taken - y
        loss = (td * td * weight).mean()
        adam.zero_grad()
        loss.backward()
        adam.step()
        td.detach().abs()
        if (i + 1) % 100 == 0:
            target.load_state_dict(online.state_dict())
        times.append(time.perf_counter_ns() - start)
    steady = sorted(times[len(times) // 5:])
    pick = lambda p: steady[min(len(steady) - 1, int(p * len(steady)))] / 1e3
    print("pytorch %s DQN update: p50 %.1f us, p90 %.1f us, p99 %.1f us over %d updates"
          % (torch.__version__, pick(0.5), pick(0.9), pick(0.99), len(steady)))


if __name__ == "__main__":
    main()
