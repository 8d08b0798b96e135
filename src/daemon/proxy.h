/* The port proxy: requests whose Host is PORT-SANDBOXID.DOMAIN go to a server
 * inside that sandbox (docs/ports.md). After the token check the connection
 * is taken over from the HTTP server and spliced to a socket made inside the
 * sandbox's network namespace; nothing is published on the host. */
#ifndef LZ_PROXY_H
#define LZ_PROXY_H

struct http_request;
struct lizardd;

/* Answer (or take over) a request for `port` of sandbox `sandbox_id`. */
void proxy_handle(struct lizardd *d, struct http_request *req, int port, const char *sandbox_id);

/* Closes every proxied connection to that sandbox (both sides shut down).
 * Called when the sandbox is paused or killed; safe from any thread, and a
 * no-op when there are none. */
void proxy_close_sandbox(const char *sandbox_id);

/* The same for one port (its token died: DELETE .../ports/PORT). */
void proxy_close_port(const char *sandbox_id, int port);

#endif
