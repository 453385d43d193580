/** TD3 and SAC jobs: collector, evaluator and pipeline on any environment with a bounded Box action space (Pendulum-v1 by default). */
package org.ding4j.example.pendulum;
