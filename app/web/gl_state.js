// The page's own answers to a few WebGL state queries. Dear ImGui's OpenGL3 backend reads the
// scissor box, the viewport and the blend state every frame (to restore them after drawing). WebGL
// answers those only after the browser's GPU process has caught up with everything drawn before
// (a synchronous round trip: measured 30-40 ms a frame in headless Chromium on SwiftShader). These
// states change only through the calls below, so the page keeps them and answers itself; the
// first query of each asks WebGL once. Every other query goes to emscripten's own glGetIntegerv.
mergeInto(LibraryManager.library, {
  $ParalensGLState: {
    ints: {}, // GL enum -> array of ints, as glGetIntegerv writes them
    watched: {0x0C10: 4, 0x0BA2: 4, 0x80C9: 1, 0x80C8: 1, 0x80CB: 1, 0x80CA: 1, 0x8009: 1, 0x883D: 1}, // how many ints each
    set: function(name, values) { ParalensGLState.ints[name] = values; },
  },

  glScissor__deps: ['$ParalensGLState'],
  glScissor: function(x, y, w, h) {
    GLctx.scissor(x, y, w, h);
    ParalensGLState.set(0x0C10 /* GL_SCISSOR_BOX */, [x, y, w, h]);
  },

  glViewport__deps: ['$ParalensGLState'],
  glViewport: function(x, y, w, h) {
    GLctx.viewport(x, y, w, h);
    ParalensGLState.set(0x0BA2 /* GL_VIEWPORT */, [x, y, w, h]);
  },

  glBlendFuncSeparate__deps: ['$ParalensGLState'],
  glBlendFuncSeparate: function(srcRGB, dstRGB, srcAlpha, dstAlpha) {
    GLctx.blendFuncSeparate(srcRGB, dstRGB, srcAlpha, dstAlpha);
    ParalensGLState.set(0x80C9 /* GL_BLEND_SRC_RGB */, [srcRGB]);
    ParalensGLState.set(0x80C8 /* GL_BLEND_DST_RGB */, [dstRGB]);
    ParalensGLState.set(0x80CB /* GL_BLEND_SRC_ALPHA */, [srcAlpha]);
    ParalensGLState.set(0x80CA /* GL_BLEND_DST_ALPHA */, [dstAlpha]);
  },

  glBlendFunc__deps: ['glBlendFuncSeparate'],
  glBlendFunc: function(src, dst) { _glBlendFuncSeparate(src, dst, src, dst); },

  glBlendEquationSeparate__deps: ['$ParalensGLState'],
  glBlendEquationSeparate: function(modeRGB, modeAlpha) {
    GLctx.blendEquationSeparate(modeRGB, modeAlpha);
    ParalensGLState.set(0x8009 /* GL_BLEND_EQUATION_RGB */, [modeRGB]);
    ParalensGLState.set(0x883D /* GL_BLEND_EQUATION_ALPHA */, [modeAlpha]);
  },

  glBlendEquation__deps: ['glBlendEquationSeparate'],
  glBlendEquation: function(mode) { _glBlendEquationSeparate(mode, mode); },

  glGetIntegerv__deps: ['$emscriptenWebGLGet', '$ParalensGLState'],
  glGetIntegerv: function(name, p) {
    var known = ParalensGLState.ints[name];
    if (!known) {
      emscriptenWebGLGet(name, p, {{{ cDefine('EM_FUNC_SIG_PARAM_I') }}});
      if (name in ParalensGLState.watched && p) {
        var n = ParalensGLState.watched[name], values = [];
        for (var i = 0; i < n; ++i) values.push({{{ makeGetValue('p', 'i*4', 'i32') }}});
        ParalensGLState.set(name, values);
      }
      return;
    }
    for (var i = 0; i < known.length; ++i) {{{ makeSetValue('p', 'i*4', 'known[i]', 'i32') }}};
  },
});
