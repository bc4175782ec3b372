/* Secrets as a C program holds them, for the redaction tests: JSON with its
 * quotes escaped when a debugger shows the string, a PGP key block, a header. */
#include <stdio.h>

int main(void) {
    const char *config = "{\"db_password\":\"hunter2-native\",\"user\":\"app\"}";
    const char *header = "Authorization: Basic YWRtaW46aHVudGVyMi1iYXNpYw==";
    const char *pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGNativeSecretKeyMaterial\n"
                      "-----END PGP PRIVATE KEY BLOCK-----\n";
    printf("%s\n%s\n%s", config, header, pgp); /* LINE:print */
    fflush(stdout);
    return 0;
}
