/* Directories: made with their parents, streamed from a descriptor. */
#ifndef SEERUN_DIR_H
#define SEERUN_DIR_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

int sr_dir_mkdir_p(const char *path, mode_t mode, sr_error_t *err);
/* A directory stream of dirfd's directory, read from its start whatever was read of it before
 * (dirfd is neither consumed nor moved); NULL with errno set. */
DIR *sr_dir_open_fd(int dirfd);

#endif
