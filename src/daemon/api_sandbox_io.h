/* REST handlers that work inside a running sandbox through its agent:
 * exec, background processes and files (docs/api.md). Each call opens its
 * own agent connection, so a call's streams, timeouts and cancellation are
 * independent of every other call's. */
#ifndef LZ_API_SANDBOX_IO_H
#define LZ_API_SANDBOX_IO_H

#include "agent_client.h"
#include "daemon.h"

void api_exec(struct api_call *call, const char *sandbox_id);
/* rest = "" | "/PID/signal" | "/PID/stdin" | "/PID/output" */
void api_processes(struct api_call *call, const char *sandbox_id, const char *rest);
/* rest = "" | "/list" | "/stat" | "/mkdir" | "/rename" */
void api_files(struct api_call *call, const char *sandbox_id, const char *rest);

/* ---- shared by api_exec.c and api_files.c (api_sandbox_io.c) ---- */

/* Find the running sandbox, connect to its agent and read HELLO. On failure
 * the answer was sent and -1 returned. sb may be NULL when the caller needs
 * nothing from the record (it is cleared either way when NULL). */
int sbio_open(struct api_call *call, const char *sandbox_id, struct agent_client *c,
              struct sandbox_record *sb);
/* Answer a failed agent call before anything was sent to the client. */
void sbio_respond_failure(struct api_call *call, const struct agent_client *c, const lz_error *err);
/* Answer an agent ERROR frame with the fitting status. */
void sbio_respond_agent_error(struct api_call *call, const struct agent_frame *f);
/* HTTP status and API code for an agent ERROR code. Never 5xx: what
 * happens inside a sandbox is the sandbox's business, not a server fault. */
int sbio_error_status(const char *agent_code, const char **api_code);
/* Code + message for a failure (for NDJSON error lines). */
const char *sbio_failure_code(const struct agent_client *c);
/* One request -> one RESPONSE object (ERROR/failure answered; NULL). */
/* Read the final RESPONSE of the stream: its JSON, or NULL after answering
 * the client with the failure / the agent's ERROR. */
json_t *sbio_read_result(struct api_call *call, struct agent_client *c);
/* Send REQUEST, then sbio_read_result. */
json_t *sbio_simple_call(struct api_call *call, struct agent_client *c, json_t *request);
/* Read the whole JSON body (must be an object); answers 400/413 itself. */
/* sbio_simple_call (request is consumed), validate the answer with `check`,
 * answer 200 with what `check` rebuilt. */
void sbio_call_and_respond(struct api_call *call, struct agent_client *c, json_t *request,
                           json_t *(*check)(json_t *, lz_error *));
json_t *sbio_read_body(struct api_call *call);
/* [a-z_][a-z0-9_-]*, at most 32 characters. */
bool sbio_username_ok(const char *s);

#endif
