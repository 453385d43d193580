"""Writes the Pendulum-v1 step table that PendulumTest checks the Java environment against.

The step below is gymnasium's Pendulum-v1 (gymnasium/envs/classic_control/pendulum.py, v1.0) line for line in
float64: g 10, m 1, l 1, dt 0.05, max speed 8, max torque 2. Rows: random states (angles far beyond +-pi too, speeds
at the clip) and torques (beyond +-2 too), then one 200-step episode from a seeded start under random torques.
Usage: python3 benchmarks/python/pendulum_table.py > src/test/resources/org/ding4j/rl/envs/pendulum_steps.csv
"""
import numpy as np

G, M, L, DT, MAX_SPEED, MAX_TORQUE = 10.0, 1.0, 1.0, 0.05, 8.0, 2.0


def angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi


def step(th, thdot, u):
    u = np.clip(u, -MAX_TORQUE, MAX_TORQUE)
    costs = angle_normalize(th) ** 2 + 0.1 * thdot ** 2 + 0.001 * (u ** 2)
    newthdot = thdot + (3 * G / (2 * L) * np.sin(th) + 3.0 / (M * L ** 2) * u) * DT
    newthdot = np.clip(newthdot, -MAX_SPEED, MAX_SPEED)
    newth = th + newthdot * DT
    return newth, newthdot, -costs


def row(th, thdot, u):
    newth, newthdot, reward = step(th, thdot, u)
    obs = np.array([np.cos(newth), np.sin(newth), newthdot], dtype=np.float32)
    return newth, newthdot, ",".join(repr(float(v)) for v in (th, thdot, u, reward, newth, newthdot, *obs))


rng = np.random.default_rng(2026)
print("th,thdot,u,reward,newth,newthdot,obs_cos,obs_sin,obs_thdot")
for _ in range(300):
    print(row(rng.uniform(-12.0, 12.0), rng.uniform(-8.5, 8.5), rng.uniform(-3.0, 3.0))[2])
th, thdot = rng.uniform(-np.pi, np.pi), rng.uniform(-1.0, 1.0)
for _ in range(200):
    th, thdot, text = row(th, thdot, rng.uniform(-2.0, 2.0))
    print(text)
