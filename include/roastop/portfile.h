/* The port a user's roastop listened on last, kept beside the key (KEY.port:
 * one decimal line, mode 0600), so that the export line an emitter needs is
 * the same from one session to the next on a login node shared with other
 * users, each with their own key (docs/emitter.md, "A shared login node"). */
#ifndef ROASTOP_PORTFILE_H
#define ROASTOP_PORTFILE_H

#include <stddef.h>

#define PORTFILE_SUFFIX ".port"

/* "PORT" and an optional newline, 1..65535 without sign, spaces or leading
 * zeros: the port, else 0. */
int portfile_parse(const char *text, size_t len);

/* The port remembered beside the key at key_path, or 0. */
int portfile_read(const char *key_path);

/* Written to a temporary and renamed: 0, or -1 with errno. */
int portfile_write(const char *key_path, int port);

#endif
