/*
 * hex.c - see hex.h.
 */
#include "hex.h"

int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

size_t hex_encode(char *out, const void *p, size_t len)
{
        static const char digits[] = "0123456789abcdef";
        const unsigned char *u = p;
        size_t i;

        for (i = 0; i < len; i++) {
                out[2 * i] = digits[u[i] >> 4];
                out[2 * i + 1] = digits[u[i] & 15];
        }
        out[2 * len] = '\0';
        return 2 * len;
}

long hex_decode(void *out, size_t cap, const char *in, size_t len)
{
        unsigned char *u = out;
        size_t i;
        int hi, lo;

        if (len % 2 || len / 2 > cap)
                return -1;
        for (i = 0; i < len; i += 2) {
                if ((hi = hex_digit(in[i])) < 0 ||
                    (lo = hex_digit(in[i + 1])) < 0)
                        return -1;
                u[i / 2] = (unsigned char)(hi << 4 | lo);
        }
        return (long)(len / 2);
}
