/*
 * Writing one of the extension's tables: to PATH.partial, renamed to PATH
 * only once every byte is out, so that a table cut short by a full disk or
 * a killed simulator is never read as a whole one.
 */

#ifndef HOTLINE_TABLE_FILE_HH
#define HOTLINE_TABLE_FILE_HH

#include <cstdio>
#include <functional>
#include <string>

namespace gem5
{
namespace hotline
{

/* Calls write(out) on a new file and puts it at path; returns an empty
 * string, or what went wrong (and then nothing is left at path). */
std::string writeTable(const std::string &path,
                       const std::function<void(std::FILE *)> &write);

} // namespace hotline
} // namespace gem5

#endif // HOTLINE_TABLE_FILE_HH
