import './base.css';
import './admin.css';
import './folders.css';
