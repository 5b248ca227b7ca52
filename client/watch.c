/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `vitals watch`: one frame per interval. On a terminal the frame is
 * redrawn in place (cursor home, each line cleared to its end, the rest
 * of the screen cleared), sized to the terminal and clipped to its
 * height, redrawn at once on SIGWINCH; 'q' or Ctrl-C ends it with the
 * terminal as it was. Piped, every frame is a block: a timestamp line,
 * the frame, a blank line, so `vitals watch | head` reads like a log.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

static volatile sig_atomic_t watch_stop, watch_resized;

static void
on_stop(int sig)
{
	(void)sig;
	watch_stop = 1;
}

static void
on_winch(int sig)
{
	(void)sig;
	watch_resized = 1;
}

static void
term_size(size_t *ret_w, size_t *ret_h)
{
	struct winsize ws;

	*ret_w = TEXT_WIDTH;
	*ret_h = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		/* narrower than 20: laid out for 20, clipped to the screen */
		*ret_w = ws.ws_col < 20 ? 20 : ws.ws_col;
		*ret_h = ws.ws_row > 1 ? ws.ws_row : 24;
	}
}

static int
write_all(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(STDOUT_FILENO, s, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The frame for a terminal: home, at most rows lines of at most cols
 * columns (the terminal would wrap a longer one and scroll the frame),
 * each cleared to its end, then the rest of the screen cleared. */
void
watch_screen(struct sbuf *o, const char *text, size_t cols, size_t rows)
{
	size_t n = 0;

	sbuf_puts(o, "\033[H");
	while (*text && n < rows) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text), k, c = 0;

		/* the bytes of the first cols code points */
		for (k = 0; k < len; k++)
			if (((unsigned char)text[k] & 0xc0) != 0x80 &&
			    ++c > cols)
				break;
		/* erased first: after a full-width line the cursor waits on
		 * its last column, and an erase there would take that
		 * character */
		sbuf_puts(o, "\033[K");
		sbuf_put(o, text, k);
		text += len + (nl != NULL);
		/* no newline after the last row: the screen would scroll */
		if (++n < rows && *text)
			sbuf_putc(o, '\n');
	}
	/* the rows below, from the next line's start: an erase at the
	 * cursor would take a full-width last line's last character */
	if (n > 0 && n < rows)
		sbuf_puts(o, "\r\n");
	sbuf_puts(o, "\033[J");
}

/* Wait up to ns for the next frame: 1 to go on, 0 to stop ('q', Ctrl-C,
 * a signal), 2 when the terminal was resized. */
static int
wait_key(int64_t ns, bool keys)
{
	struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
	int64_t end = clock_now_ns(CLOCK_MONOTONIC) + ns;

	for (;;) {
		int64_t left = end - clock_now_ns(CLOCK_MONOTONIC);
		int r;

		if (watch_stop)
			return 0;
		if (watch_resized) {
			watch_resized = 0;
			return 2;
		}
		if (left <= 0)
			return 1;
		/* at most a minute per poll: the int stays in range */
		r = poll(keys ? &p : NULL, keys ? 1 : 0,
		    left > 60 * 1000000000LL ?
			60000 :
			(int)((left + 999999) / 1000000));
		if (r > 0 && (p.revents & POLLIN)) {
			char c;

			if (read(STDIN_FILENO, &c, 1) != 1)
				keys = false; /* end of input: no more keys */
			else if (c == 'q' || c == 'Q' || c == 3)
				return 0;
		} else if (r > 0) {
			keys = false;
		}
	}
}

/* What watch_run changed on the terminal, put back by watch_restore
 * whatever way the process ends (a command's usage_err() exits). */
static struct termios watch_saved;
static bool watch_raw, watch_hidden;

static void
watch_restore(void)
{
	if (watch_hidden) {
		watch_hidden = false;
		write_all("\033[?25h\n", 7);
	}
	if (watch_raw) {
		watch_raw = false;
		tcsetattr(STDIN_FILENO, TCSANOW, &watch_saved);
	}
}

int
watch_run(const struct watch *w, watch_frame_fn frame, void *arg)
{
	struct sigaction sa;
	struct termios saved, raw;
	bool keys = false, restore = false;
	struct sbuf b, s;
	uint64_t i;
	int x = VX_OK, go = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop; /* no SA_RESTART: wake poll */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	atexit(watch_restore);
	sa.sa_handler = on_winch;
	sigaction(SIGWINCH, &sa, NULL);
	if (w->tty && isatty(STDIN_FILENO) &&
	    tcgetattr(STDIN_FILENO, &saved) == 0) {
		raw = saved;
		/* keys without Enter, not echoed; ISIG kept: Ctrl-C is
		 * SIGINT */
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		restore = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
		watch_saved = saved;
		watch_raw = restore;
		keys = true;
	}
	if (w->tty) {
		write_all("\033[?25l", 6); /* cursor hidden while drawing */
		watch_hidden = true;
	}
	sbuf_init(&b);
	sbuf_init(&s);
	for (i = 0; go && !watch_stop && (w->count == 0 || i < w->count); i++) {
		size_t width = TEXT_WIDTH, height = 0;

		if (w->tty)
			term_size(&width, &height);
		sbuf_reset(&b);
		sbuf_reset(&s);
		x = frame(&b, width, arg);
		if (x != VX_OK && x != VX_UNAVAILABLE)
			break;
		if (b.err || s.err) {
			x = VX_PROTOCOL;
			break;
		}
		if (w->tty) {
			watch_screen(&s, sbuf_str(&b), width, height);
		} else if (!w->json) {
			char when[40];

			fmt_time(when, sizeof(when),
			    clock_now_ns(CLOCK_REALTIME));
			if (i > 0)
				sbuf_putc(&s, '\n');
			sbuf_printf(&s, "--- %s\n", when);
			sbuf_puts(&s, sbuf_str(&b));
		} else {
			sbuf_puts(&s, sbuf_str(&b));
		}
		if (write_all(sbuf_str(&s), s.len) < 0) {
			x = VX_PROTOCOL;
			break;
		}
		x = VX_OK;
		if (w->count && i + 1 >= w->count)
			break;
		go = wait_key(w->interval_ns, keys); /* 2: resized, draw now */
	}
	(void)restore;
	watch_restore();
	sbuf_free(&b);
	sbuf_free(&s);
	return x;
}
