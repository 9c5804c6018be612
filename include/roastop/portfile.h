/* The port a user's roastop listened on last, kept beside the key (KEY.port:
 * one decimal line, mode 0600), so that the export line an emitter needs is
 * the same from one session to the next on a login node shared with other
 * users, each with their own key (docs/emitter.md, "A shared login node"). */
#ifndef ROASTOP_PORTFILE_H
#define ROASTOP_PORTFILE_H

#include <stddef.h>

#define PORTFILE_SUFFIX ".port"

/* A port file's text: "PORT" with an optional newline, PORT in 1..65535
 * without sign, spaces or leading zeros. The port, or 0 when the text is
 * anything else. */
int portfile_parse(const char *text, size_t len);

/* The port remembered beside the key at key_path, or 0 (none, unreadable,
 * malformed). */
int portfile_read(const char *key_path);

/* Remembers port beside the key: written to a temporary and renamed, so a
 * reader sees the old line or the new one. 0, or -1 with errno. */
int portfile_write(const char *key_path, int port);

#endif
