/* A server that answers every request at once (issue 25): it reads a
 * line, copies its id and writes a canned result. What a request costs
 * here is the pipes and the processes between it and the client. */
#include <stdio.h>
#include <string.h>

int main(void) {
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, stdin) > 0) {
		char *id = strstr(line, "\"id\":");
		if (id == NULL || strstr(line, "\"method\"") == NULL)
			continue; /* a notification or a response */
		id += 5;
		int k = (int)strcspn(id, ",}");
		if (strstr(line, "\"method\":\"initialize\"") != NULL)
			printf("{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"cserver\",\"version\":\"1\"}}}\n", k, id);
		else
			printf("{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n", k, id);
		fflush(stdout);
	}
	return 0;
}
