/*
 * delay_hub: the links between test hosts (network namespaces) when the kernel has no netem (this machine's has no
 * sch_netem, no fq and no tc classifiers). It opens one TAP device per host, prints "ready" once they exist (the
 * harness then moves each into its namespace, which an open TAP allows), and forwards every Ethernet frame read
 * from one TAP to all the others after a fixed delay, optionally dropping a fraction: one hop, so the delay is per
 * direction, as netem's on each end of a link, and a round trip is twice it. Frames keep their order (one FIFO, one
 * delay). When the queue is full (1024 segments) a segment is dropped, as a full router queue would.
 *
 * usage: delay_hub DELAY_US LOSS_PER_MILLION TAP_NAME...   (ends on SIGTERM, or when stdin closes)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_TAPS 16
/*
 * The TAPs take offloads (IFF_VNET_HDR, TSO): the kernel hands over TCP segments of up to 64 KB, each behind a
 * virtio_net_hdr, and takes them back the same way, so the hub moves a 64 KB segment for the cost of one frame; it
 * forwards header and segment as read. Room for 64 MB in flight.
 */
#define SLOTS 1024
#define FRAME (65536 + 64)

struct slot { int64_t due_ns; int from; int len; unsigned char data[FRAME]; };

static struct slot ring[SLOTS];

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int open_tap(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
    if (fd < 0) { perror("/dev/net/tun"); exit(2); }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
    strncpy(ifr.ifr_name, name, IFNAMSIZ - 1);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) { fprintf(stderr, "TUNSETIFF %s: %s\n", name, strerror(errno)); exit(2); }
    if (ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) < 0) {
        fprintf(stderr, "TUNSETOFFLOAD %s: %s\n", name, strerror(errno));
        exit(2);
    }
    return fd;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc - 3 > MAX_TAPS) { fprintf(stderr, "usage: delay_hub DELAY_US LOSS_PPM TAP TAP...\n"); return 2; }
    const int64_t delay = atoll(argv[1]) * 1000LL;
    const long loss = atol(argv[2]);
    const int n = argc - 3;
    struct pollfd fds[MAX_TAPS + 1];
    for (int i = 0; i < n; i++) { fds[i].fd = open_tap(argv[3 + i]); fds[i].events = POLLIN; }
    fds[n].fd = 0; fds[n].events = POLLIN;
    printf("ready\n");
    fflush(stdout);
    unsigned long head = 0, tail = 0, dropped = 0;
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    for (;;) {
        /* ppoll's timeout has nanosecond resolution (an hrtimer): sub-millisecond delays without spinning. */
        struct timespec timeout, *wait_for = NULL;
        if (head != tail) {
            int64_t wait = ring[head % SLOTS].due_ns - now_ns();
            if (wait < 0) wait = 0;
            timeout.tv_sec = wait / 1000000000LL;
            timeout.tv_nsec = wait % 1000000000LL;
            wait_for = &timeout;
        }
        if (ppoll(fds, n + 1, wait_for, NULL) < 0 && errno != EINTR) { perror("ppoll"); return 1; }
        if (fds[n].revents & (POLLIN | POLLHUP)) {
            char c;
            if (read(0, &c, 1) <= 0) { fprintf(stderr, "delay_hub: dropped %lu frames\n", dropped); return 0; }
        }
        for (int i = 0; i < n; i++) {
            if (!(fds[i].revents & POLLIN)) continue;
            for (;;) {
                struct slot *s = &ring[tail % SLOTS];
                ssize_t len = read(fds[i].fd, s->data, FRAME);
                if (len <= 0) break;
                rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
                if (tail - head >= SLOTS || (loss > 0 && (long)(rng % 1000000) < loss)) { dropped++; continue; }
                s->due_ns = now_ns() + delay;
                s->from = i;
                s->len = (int)len;
                tail++;
            }
        }
        const int64_t t = now_ns();
        while (head != tail && ring[head % SLOTS].due_ns <= t) {
            struct slot *s = &ring[head % SLOTS];
            for (int j = 0; j < n; j++) {
                if (j != s->from && write(fds[j].fd, s->data, s->len) < 0 && errno != EAGAIN && errno != EIO) {
                    perror("write");
                }
            }
            head++;
        }
    }
}
