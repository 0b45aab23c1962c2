#include "table_file.hh"

#include <cerrno>
#include <cstring>

namespace gem5
{
namespace hotline
{

std::string
writeTable(const std::string &path,
           const std::function<void(std::FILE *)> &write)
{
    const std::string partial = path + ".partial";
    std::FILE *out = std::fopen(partial.c_str(), "w");
    if (!out)
        return partial + ": " + std::strerror(errno);
    write(out);
    const bool failed = std::ferror(out) != 0;
    if (std::fclose(out) != 0 || failed) {
        const std::string why = std::strerror(errno);
        std::remove(partial.c_str());
        return path + ": " + why;
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(partial.c_str());
        return path + ": " + why;
    }
    return "";
}

} // namespace hotline
} // namespace gem5
