/** The continuous-control example's environment: gym's Pendulum-v1, as DI-engine's dizoo keeps its envs beside ding. */
package org.ding4j.example.pendulum;
