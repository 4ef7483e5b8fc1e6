# jupyter-cluster: a login shell (a terminal, an interactive ssh) keeps the
# container's PATH, the image's, which /etc/profile has just reset (Debian's gives
# work /usr/local/bin:/usr/bin:/bin:/usr/games): the container's directories
# first, then those /etc/profile added. Put in by the engine; the start-up script
# writes the PATH it reads.
if [ -r /opt/jupyter-cluster/path ] && read -r _jc_path </opt/jupyter-cluster/path \
    && [ -n "$_jc_path" ]; then
    _jc_login=$PATH
    PATH=$_jc_path
    _jc_ifs=$IFS
    IFS=:
    for _jc_dir in $_jc_login; do
        case ":$PATH:" in *":$_jc_dir:"*) ;; *) PATH=$PATH:$_jc_dir ;; esac
    done
    IFS=$_jc_ifs
    export PATH
fi
unset _jc_path _jc_login _jc_ifs _jc_dir
