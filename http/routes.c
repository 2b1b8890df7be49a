/*
 * routes.c - the route table: which handler answers which path, with
 * which methods, and whether it needs the bearer token.  The request loop
 * (server.c) checks a request, looks its path up here and calls the
 * handler; adding an endpoint is adding a row.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define HTTP_M_READ (HTTP_M_GET | HTTP_M_HEAD)

/* Looked up in order: the first row that matches wins, so a prefix row
 * comes after the rows for the paths it covers. */
static const struct http_route http_routes[] = {
    {HTTP_M_READ, "/", http_page_handle, HTTP_ROUTE_PUBLIC},
    {HTTP_M_READ, "/healthz", http_healthz_handle, HTTP_ROUTE_PUBLIC},
    {HTTP_M_READ, "/readyz", http_readyz_handle, 0},
    {HTTP_M_READ, "/metrics", http_metrics_handle, 0},
    {HTTP_M_READ, "/api/v1/summary", http_api_summary_handle, 0},
    {HTTP_M_READ, "/api/v1/anomalies", http_api_anomalies_handle, 0},
    {HTTP_M_READ, "/api/v1/producers", http_api_producers_handle, 0},
    {HTTP_M_READ, "/api/v1/partitions", http_api_partitions_handle, 0},
    {HTTP_M_READ, "/api/v1/history", http_api_history_handle, 0},
    {HTTP_M_READ, HTTP_IDS_PATH, http_api_ids_handle, HTTP_ROUTE_PREFIX},
    {HTTP_M_READ, "/api/v1/flows", http_api_flows_handle, 0},
    {HTTP_M_READ, "/api/v1/group", http_api_group_handle, 0},
    {HTTP_M_READ, "/api/v1/", http_api_unknown_handle, HTTP_ROUTE_PREFIX},
};

#define HTTP_ROUTES_CNT (sizeof(http_routes) / sizeof(http_routes[0]))

/* In the order an Allow header lists them. */
static const struct {
        const char *name;
        unsigned bit;
} http_methods[] = {
    {"GET", HTTP_M_GET},
    {"HEAD", HTTP_M_HEAD},
};

const struct http_route *http_route_find(const char *path, const char **rest)
{
        const struct http_route *rt;
        size_t i, n;

        for (i = 0; i < HTTP_ROUTES_CNT; i++) {
                rt = &http_routes[i];
                if (!(rt->flags & HTTP_ROUTE_PREFIX)) {
                        if (strcmp(path, rt->path))
                                continue;
                        *rest = "";
                        return rt;
                }
                n = strlen(rt->path);
                if (!strncmp(path, rt->path, n)) {
                        *rest = path + n;
                        return rt;
                }
        }
        *rest = "";
        return NULL;
}

unsigned http_method_bit(const char *method)
{
        size_t i;

        for (i = 0; i < sizeof(http_methods) / sizeof(http_methods[0]); i++)
                if (!strcmp(method, http_methods[i].name))
                        return http_methods[i].bit;
        return 0;
}

unsigned http_routes_methods(void)
{
        unsigned m = 0;
        size_t i;

        for (i = 0; i < HTTP_ROUTES_CNT; i++)
                m |= http_routes[i].methods;
        return m;
}

void http_methods_text(unsigned methods, char *buf, size_t size)
{
        size_t i, o = 0;
        int n;

        buf[0] = '\0';
        for (i = 0; i < sizeof(http_methods) / sizeof(http_methods[0]); i++) {
                if (!(methods & http_methods[i].bit))
                        continue;
                n = snprintf(buf + o, size - o, "%s%s", o ? ", " : "",
                             http_methods[i].name);
                if (n < 0 || (size_t)n >= size - o) {
                        buf[o] = '\0'; /* whole names only */
                        return;
                }
                o += (size_t)n;
        }
}
